#include "netlink.hpp"

#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <net/if.h>

#include <cerrno>
#include <ctime>

namespace ocirun {

Status loopback_up() {
    unsigned index = ::if_nametoindex("lo");
    if (index == 0) return fail_errno("netlink: no lo in the network namespace");
    struct mnl_socket *nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
    if (!nl) return fail_errno("netlink: open");
    struct Close {
        struct mnl_socket *s;
        ~Close() { mnl_socket_close(s); }
    } close{nl};
    if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) return fail_errno("netlink: bind");
    char buf[MNL_SOCKET_BUFFER_SIZE];
    struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
    nlh->nlmsg_type = RTM_NEWLINK;
    nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    nlh->nlmsg_seq = static_cast<unsigned>(::time(nullptr));
    auto *ifm =
        static_cast<struct ifinfomsg *>(mnl_nlmsg_put_extra_header(nlh, sizeof(struct ifinfomsg)));
    ifm->ifi_family = AF_UNSPEC;
    ifm->ifi_index = static_cast<int>(index);
    ifm->ifi_flags = IFF_UP;
    ifm->ifi_change = IFF_UP;
    if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) return fail_errno("netlink: send");
    ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof buf);
    if (n < 0) return fail_errno("netlink: receive");
    unsigned seq = nlh->nlmsg_seq, portid = mnl_socket_get_portid(nl);
    if (mnl_cb_run(buf, static_cast<size_t>(n), seq, portid, nullptr, nullptr) < 0)
        return fail_errno("netlink: set lo up");
    return {};
}

} // namespace ocirun
