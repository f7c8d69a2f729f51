#include "netlink.hpp"

#include "fd.hpp"

#include <dlfcn.h>
#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace ocirun {

namespace {

// libmnl, loaded when first needed rather than linked: only linux.netDevices
// needs netlink (the loopback comes up with an ioctl), and loading a shared
// library costs every oci-run process that would never use it (0.3 ms per
// process on the benchmark VM).
#define OCI_MNL_FUNCTIONS(X)                                                                       \
    X(mnl_socket_open2)                                                                            \
    X(mnl_socket_bind)                                                                             \
    X(mnl_socket_close)                                                                            \
    X(mnl_socket_get_portid)                                                                       \
    X(mnl_socket_sendto)                                                                           \
    X(mnl_socket_recvfrom)                                                                         \
    X(mnl_cb_run)                                                                                  \
    X(mnl_nlmsg_put_header)                                                                        \
    X(mnl_nlmsg_put_extra_header)                                                                  \
    X(mnl_nlmsg_get_payload)                                                                       \
    X(mnl_nlmsg_get_payload_offset)                                                                \
    X(mnl_nlmsg_get_payload_tail)                                                                  \
    X(mnl_attr_ok)                                                                                 \
    X(mnl_attr_next)                                                                               \
    X(mnl_attr_get_type)                                                                           \
    X(mnl_attr_get_payload)                                                                        \
    X(mnl_attr_get_payload_len)                                                                    \
    X(mnl_attr_put)                                                                                \
    X(mnl_attr_put_u32)                                                                            \
    X(mnl_attr_put_strz)

struct Mnl {
#define OCI_MNL_POINTER(name) decltype(&::name) name = nullptr;
    OCI_MNL_FUNCTIONS(OCI_MNL_POINTER)
#undef OCI_MNL_POINTER
};

Mnl g_mnl;
bool g_mnl_loaded = false;
bool g_mnl_frozen = false;

constexpr const char *kMnlLibrary = "libmnl.so.0";

Status load_mnl() {
    if (g_mnl_loaded) return {};
    if (g_mnl_frozen)
        return fail_code(ELIBACC, std::string("netlink: ") + kMnlLibrary +
                                      " was not loaded before the container's init started");
    void *lib = ::dlopen(kMnlLibrary, RTLD_NOW | RTLD_LOCAL);
    if (!lib) return fail_code(ELIBACC, std::string("netlink: load ") + ::dlerror());
    Mnl m;
#define OCI_MNL_RESOLVE(name)                                                                      \
    m.name = reinterpret_cast<decltype(m.name)>(::dlsym(lib, #name));                              \
    if (!m.name)                                                                                   \
        return fail_code(ELIBACC, std::string("netlink: ") + kMnlLibrary + " lacks " #name);
    OCI_MNL_FUNCTIONS(OCI_MNL_RESOLVE)
#undef OCI_MNL_RESOLVE
    g_mnl = m;
    g_mnl_loaded = true;
    return {};
}

// One rtnetlink socket for a few requests.
class Rtnl {
  public:
    ~Rtnl() {
        if (nl_) g_mnl.mnl_socket_close(nl_);
    }
    Status open() {
        OCI_CHECK(load_mnl());
        nl_ = g_mnl.mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
        if (!nl_) return fail_errno("netlink: open");
        if (g_mnl.mnl_socket_bind(nl_, 0, MNL_SOCKET_AUTOPID) < 0)
            return fail_errno("netlink: bind");
        return {};
    }
    struct nlmsghdr *start(uint16_t type, uint16_t flags) {
        struct nlmsghdr *nlh = g_mnl.mnl_nlmsg_put_header(buf_);
        nlh->nlmsg_type = type;
        nlh->nlmsg_flags = NLM_F_REQUEST | flags;
        nlh->nlmsg_seq = ++seq_;
        return nlh;
    }
    // Send and read the answers until the ACK or the dump's end; `cb` sees
    // each data message. Errors name `what`, with the kernel's errno.
    Status run(struct nlmsghdr *nlh, const std::string &what, mnl_cb_t cb = nullptr,
               void *data = nullptr) {
        if (g_mnl.mnl_socket_sendto(nl_, nlh, nlh->nlmsg_len) < 0)
            return fail_errno(what + ": send");
        unsigned portid = g_mnl.mnl_socket_get_portid(nl_);
        for (;;) {
            ssize_t n = g_mnl.mnl_socket_recvfrom(nl_, buf_, sizeof buf_);
            if (n < 0) return fail_errno(what + ": receive");
            int r = g_mnl.mnl_cb_run(buf_, static_cast<size_t>(n), seq_, portid, cb, data);
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
    auto *ifm = static_cast<struct ifinfomsg *>(
        g_mnl.mnl_nlmsg_put_extra_header(nlh, sizeof(struct ifinfomsg)));
    ifm->ifi_family = AF_UNSPEC;
    ifm->ifi_index = static_cast<int>(index);
    ifm->ifi_flags = flags;
    ifm->ifi_change = change;
    if (netns_fd >= 0) g_mnl.mnl_attr_put_u32(nlh, IFLA_NET_NS_FD, static_cast<uint32_t>(netns_fd));
    if (!new_name.empty()) g_mnl.mnl_attr_put_strz(nlh, IFLA_IFNAME, new_name.c_str());
    return nl.run(nlh, what);
}

struct AddrDump {
    unsigned index;
    std::vector<IfAddress> *out;
};

int on_addr(const struct nlmsghdr *nlh, void *data) {
    auto *d = static_cast<AddrDump *>(data);
    const auto *ifa = static_cast<const struct ifaddrmsg *>(g_mnl.mnl_nlmsg_get_payload(nlh));
    if (ifa->ifa_index != d->index) return MNL_CB_OK;
    // Link-local IPv6 addresses are made anew by the kernel.
    if (ifa->ifa_scope == RT_SCOPE_LINK || ifa->ifa_scope == RT_SCOPE_HOST) return MNL_CB_OK;
    const char *tail = static_cast<const char *>(g_mnl.mnl_nlmsg_get_payload_tail(nlh));
    for (auto *attr = static_cast<const struct nlattr *>(
             g_mnl.mnl_nlmsg_get_payload_offset(nlh, sizeof *ifa));
         g_mnl.mnl_attr_ok(attr, static_cast<int>(tail - reinterpret_cast<const char *>(attr)));
         attr = g_mnl.mnl_attr_next(attr)) {
        if (g_mnl.mnl_attr_get_type(attr) != IFA_ADDRESS) continue;
        IfAddress a;
        a.family = ifa->ifa_family;
        a.prefix = ifa->ifa_prefixlen;
        size_t len = a.family == AF_INET ? 4 : 16;
        if (g_mnl.mnl_attr_get_payload_len(attr) != len) continue;
        std::memcpy(a.addr, g_mnl.mnl_attr_get_payload(attr), len);
        d->out->push_back(a);
    }
    return MNL_CB_OK;
}

} // namespace

Status loopback_up() {
    Fd sock(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!sock.valid()) return fail_errno("loopback: socket");
    struct ifreq ifr {};
    std::strncpy(ifr.ifr_name, "lo", sizeof ifr.ifr_name - 1);
    if (::ioctl(sock.get(), SIOCGIFFLAGS, &ifr) < 0) return fail_errno("loopback: flags of lo");
    if (ifr.ifr_flags & IFF_UP) return {};
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
    if (::ioctl(sock.get(), SIOCSIFFLAGS, &ifr) < 0) return fail_errno("loopback: set lo up");
    return {};
}

void forbid_netlink_loading() {
    g_mnl_frozen = true;
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
            g_mnl.mnl_nlmsg_put_extra_header(nlh, sizeof(struct ifaddrmsg)));
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
                        (new_name.empty() || new_name == name ? "" : " as " + new_name));
}

Status configure_interface(const std::string &name, const std::vector<IfAddress> &addrs) {
    std::string what = "linux.netDevices: " + name;
    unsigned index = OCI_TRY(index_of(name, what));
    Rtnl nl;
    OCI_CHECK(nl.open());
    for (const auto &a : addrs) {
        struct nlmsghdr *nlh = nl.start(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK);
        auto *ifa = static_cast<struct ifaddrmsg *>(
            g_mnl.mnl_nlmsg_put_extra_header(nlh, sizeof(struct ifaddrmsg)));
        ifa->ifa_family = static_cast<uint8_t>(a.family);
        ifa->ifa_prefixlen = a.prefix;
        ifa->ifa_index = index;
        ifa->ifa_scope = RT_SCOPE_UNIVERSE;
        size_t len = a.family == AF_INET ? 4 : 16;
        g_mnl.mnl_attr_put(nlh, IFA_LOCAL, len, a.addr);
        g_mnl.mnl_attr_put(nlh, IFA_ADDRESS, len, a.addr);
        OCI_CHECK(nl.run(nlh, what + ": add an address"));
    }
    return set_link(nl, index, IFF_UP, IFF_UP, -1, "", what + ": set up");
}

} // namespace ocirun
