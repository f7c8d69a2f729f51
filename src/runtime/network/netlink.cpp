#include "runtime/network/netlink.hpp"

#include "oci/fd.hpp"
#include "runtime/lifecycle/hooks.hpp"
#include "runtime/network/shim_launch.hpp"

#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace ocirun {

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

Status check_interface(const std::string &name) {
    if (::if_nametoindex(name.c_str()) == 0)
        return fail_errno("linux.netDevices[" + name + "]: no interface " + name);
    return {};
}

Status check_net_device_helper() {
    std::string path = shim_path();
    if (::access(path.c_str(), X_OK) < 0)
        return fail_errno("linux.netDevices needs the network helper " + path);
    return {};
}

Status move_net_device(const std::string &name, const std::string &new_name,
                       const std::string &netns) {
    oci::Hook helper = helper_program(
        shim_path(), {"oci-run-shim", "--netdev", name, new_name.empty() ? name : new_name, netns});
    return run_program(helper, "linux.netDevices[" + name + "]: network helper", "");
}

} // namespace ocirun
