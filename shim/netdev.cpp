#include "netdev.hpp"

#include "oci/error.hpp"
#include "oci/fd.hpp"

#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace ocirun::shim {

namespace {

// An address of an interface (what moving it to another namespace drops).
struct IfAddress {
    int family = 0; // AF_INET or AF_INET6
    uint8_t addr[16] = {};
    uint8_t prefix = 0;
};

// One rtnetlink socket for a few requests.
class Rtnl {
  public:
    ~Rtnl() {
        if (nl_) mnl_socket_close(nl_);
    }
    Status open() {
        nl_ = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
        if (!nl_) return fail_errno("netlink: open");
        if (mnl_socket_bind(nl_, 0, MNL_SOCKET_AUTOPID) < 0) return fail_errno("netlink: bind");
        return {};
    }
    struct nlmsghdr *start(uint16_t type, uint16_t flags) {
        struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf_);
        nlh->nlmsg_type = type;
        nlh->nlmsg_flags = NLM_F_REQUEST | flags;
        nlh->nlmsg_seq = ++seq_;
        return nlh;
    }
    // Send and read the answers until the ACK or the dump's end; `cb` sees
    // each data message. Errors name `what`, with the kernel's errno.
    Status run(struct nlmsghdr *nlh, const std::string &what, mnl_cb_t cb = nullptr,
               void *data = nullptr) {
        if (mnl_socket_sendto(nl_, nlh, nlh->nlmsg_len) < 0) return fail_errno(what + ": send");
        unsigned portid = mnl_socket_get_portid(nl_);
        for (;;) {
            ssize_t n = mnl_socket_recvfrom(nl_, buf_, sizeof buf_);
            if (n < 0) return fail_errno(what + ": receive");
            int r = mnl_cb_run(buf_, static_cast<size_t>(n), seq_, portid, cb, data);
            if (r < 0) return fail_errno(what);
            if (r == MNL_CB_STOP) return {};
        }
    }

  private:
    struct mnl_socket *nl_ = nullptr;
    unsigned seq_ = static_cast<unsigned>(::time(nullptr));
    char buf_[8192]; // MNL_SOCKET_BUFFER_SIZE (a call, not a constant)
};

Result<unsigned> index_of(const std::string &name, const std::string &what) {
    unsigned index = ::if_nametoindex(name.c_str());
    if (index == 0) return fail_errno(what + ": no interface " + name);
    return index;
}

Status set_link(Rtnl &nl, unsigned index, unsigned flags, unsigned change, int netns_fd,
                const std::string &new_name, const std::string &what) {
    struct nlmsghdr *nlh = nl.start(RTM_NEWLINK, NLM_F_ACK);
    auto *ifm =
        static_cast<struct ifinfomsg *>(mnl_nlmsg_put_extra_header(nlh, sizeof(struct ifinfomsg)));
    ifm->ifi_family = AF_UNSPEC;
    ifm->ifi_index = static_cast<int>(index);
    ifm->ifi_flags = flags;
    ifm->ifi_change = change;
    if (netns_fd >= 0) mnl_attr_put_u32(nlh, IFLA_NET_NS_FD, static_cast<uint32_t>(netns_fd));
    if (!new_name.empty()) mnl_attr_put_strz(nlh, IFLA_IFNAME, new_name.c_str());
    return nl.run(nlh, what);
}

struct AddrDump {
    unsigned index;
    std::vector<IfAddress> *out;
};

int on_addr(const struct nlmsghdr *nlh, void *data) {
    auto *d = static_cast<AddrDump *>(data);
    const auto *ifa = static_cast<const struct ifaddrmsg *>(mnl_nlmsg_get_payload(nlh));
    if (ifa->ifa_index != d->index) return MNL_CB_OK;
    // Link-local IPv6 addresses are made anew by the kernel.
    if (ifa->ifa_scope == RT_SCOPE_LINK || ifa->ifa_scope == RT_SCOPE_HOST) return MNL_CB_OK;
    const char *tail = static_cast<const char *>(mnl_nlmsg_get_payload_tail(nlh));
    for (auto *attr =
             static_cast<const struct nlattr *>(mnl_nlmsg_get_payload_offset(nlh, sizeof *ifa));
         mnl_attr_ok(attr, static_cast<int>(tail - reinterpret_cast<const char *>(attr)));
         attr = mnl_attr_next(attr)) {
        if (mnl_attr_get_type(attr) != IFA_ADDRESS) continue;
        IfAddress a;
        a.family = ifa->ifa_family;
        a.prefix = ifa->ifa_prefixlen;
        size_t len = a.family == AF_INET ? 4 : 16;
        if (mnl_attr_get_payload_len(attr) != len) continue;
        std::memcpy(a.addr, mnl_attr_get_payload(attr), len);
        d->out->push_back(a);
    }
    return MNL_CB_OK;
}

Result<std::vector<IfAddress>> interface_addresses(const std::string &name) {
    std::string what = "linux.netDevices[" + name + "]";
    unsigned index = OCI_TRY(index_of(name, what));
    Rtnl nl;
    OCI_CHECK(nl.open());
    std::vector<IfAddress> out;
    for (int family : {AF_INET, AF_INET6}) {
        struct nlmsghdr *nlh = nl.start(RTM_GETADDR, NLM_F_DUMP);
        auto *ifa = static_cast<struct ifaddrmsg *>(
            mnl_nlmsg_put_extra_header(nlh, sizeof(struct ifaddrmsg)));
        ifa->ifa_family = static_cast<uint8_t>(family);
        AddrDump d{index, &out};
        OCI_CHECK(nl.run(nlh, what + ": list addresses", on_addr, &d));
    }
    return out;
}

Status move_interface(const std::string &name, int netns_fd, const std::string &new_name) {
    std::string what = "linux.netDevices[" + name + "]";
    unsigned index = OCI_TRY(index_of(name, what));
    Rtnl nl;
    OCI_CHECK(nl.open());
    return set_link(nl, index, 0, 0, netns_fd, new_name == name ? "" : new_name,
                    what + ": move into the container's network namespace" +
                        (new_name == name ? "" : " as " + new_name));
}

Status configure_interface(const std::string &name, const std::vector<IfAddress> &addrs) {
    std::string what = "linux.netDevices: " + name;
    unsigned index = OCI_TRY(index_of(name, what));
    Rtnl nl;
    OCI_CHECK(nl.open());
    for (const auto &a : addrs) {
        struct nlmsghdr *nlh = nl.start(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK);
        auto *ifa = static_cast<struct ifaddrmsg *>(
            mnl_nlmsg_put_extra_header(nlh, sizeof(struct ifaddrmsg)));
        ifa->ifa_family = static_cast<uint8_t>(a.family);
        ifa->ifa_prefixlen = a.prefix;
        ifa->ifa_index = index;
        ifa->ifa_scope = RT_SCOPE_UNIVERSE;
        size_t len = a.family == AF_INET ? 4 : 16;
        mnl_attr_put(nlh, IFA_LOCAL, len, a.addr);
        mnl_attr_put(nlh, IFA_ADDRESS, len, a.addr);
        OCI_CHECK(nl.run(nlh, what + ": add an address"));
    }
    return set_link(nl, index, IFF_UP, IFF_UP, -1, "", what + ": set up");
}

Status move_and_configure(const std::string &name, const std::string &new_name,
                          const std::string &netns) {
    Fd ns(::open(netns.c_str(), O_RDONLY | O_CLOEXEC));
    if (!ns.valid()) return fail_errno("linux.netDevices[" + name + "]: open " + netns);
    // Never "into" the namespace the interface is in: that would only rename
    // it on the host.
    struct stat target, own;
    if (::fstat(ns.get(), &target) < 0 || ::stat("/proc/self/ns/net", &own) < 0)
        return fail_errno("linux.netDevices[" + name + "]: stat " + netns);
    if (target.st_dev == own.st_dev && target.st_ino == own.st_ino)
        return fail("linux.netDevices[" + name + "]: " + netns +
                    " is the host's network namespace, not the container's");
    auto addrs = OCI_TRY(interface_addresses(name));
    OCI_CHECK(move_interface(name, ns.get(), new_name));
    if (::setns(ns.get(), CLONE_NEWNET) < 0)
        return fail_errno("linux.netDevices[" + name + "]: join the container's network namespace");
    return configure_interface(new_name, addrs);
}

} // namespace

int netdev_main(int argc, char **argv) {
    if (argc != 5 || !*argv[2] || !*argv[3] || !*argv[4]) {
        std::fprintf(stderr, "oci-run-shim: usage: oci-run-shim --netdev NAME NEWNAME NETNS\n");
        return 2;
    }
    if (auto r = move_and_configure(argv[2], argv[3], argv[4]); !r) {
        std::fprintf(stderr, "oci-run-shim: %s\n", r.error().text().c_str());
        return 2;
    }
    return 0;
}

} // namespace ocirun::shim
