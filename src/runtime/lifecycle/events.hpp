// `events`: a container's statistics and OOM notices as runc's event JSON
// ({"type":"stats","id":...,"data":{cpu, memory, pids, blkio, hugetlb,
// network_interfaces}} and {"type":"oom"}),
// read from its cgroup files on v1 and v2.
#pragma once

#include "oci/error.hpp"

#include <functional>
#include <string>

namespace ocirun {

// One stats event, as a JSON line.
Result<std::string> container_stats_event(const std::string &root, const std::string &id);

// Until the container stops: a stats event every interval_ms, an oom event
// whenever the kernel's OOM killer acts in the container's cgroup, and the
// network helper's egress events ({"type":"egress",...}, shim/egress_log.hpp)
// as they are logged (both checked every 100 ms). Each line goes to `emit`.
Status stream_events(const std::string &root, const std::string &id, int interval_ms,
                     const std::function<void(const std::string &)> &emit);

} // namespace ocirun
