// oci-run-shim --netdev: linux.netDevices' host side, run by `oci-run create`
// (runtime/network/netlink.cpp) once per device, while the container's init waits.
// It reads the interface's global addresses, moves it into the container's
// network namespace under its new name, joins that namespace, gives the
// addresses back and sets the interface up: what moving drops. rtnetlink
// through libmnl; the runtime itself links no netlink library (it is a static
// binary, and few containers move interfaces).
//
//   oci-run-shim --netdev NAME NEWNAME NETNS
//
// NETNS: the container's network namespace (the path it is joined by, or
// /proc/<init>/ns/net of the runtime's unreaped child).
//
// Exit status 0, or 2 with one line on stderr naming the device.
#pragma once

namespace ocirun::shim {

int netdev_main(int argc, char **argv);

} // namespace ocirun::shim
