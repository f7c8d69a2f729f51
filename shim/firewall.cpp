// oci-run-firewall: the nftables side of a network need in a network
// namespace the runtime joined (oci/policy/firewall_rules.hpp), run and
// waited for by oci-run: create installs, report checks, delete removes.
// libnftables (Debian's libnftables1) applies and lists the table; the
// runtime is a static binary and links no netfilter library, and the
// long-running helper (oci-run-shim) does not map it either.
//
//   oci-run-firewall install ID NEED
//   oci-run-firewall check ID NEED
//   oci-run-firewall remove ID
//
// fd 3 is the network namespace (the runtime opened it; no path from a
// bundle reaches this program). ID is the container's (the comment names
// it), NEED none, local or https.
//
// Exit status: 0 done (check: the kernel lists exactly the table); 1 check:
// the table is absent or differs (stdout: "absent", or "differs" and the
// kernel's listing); 3 install: the namespace has a table of that name
// already (stdout: "exists", and its listing); 2 anything else, with one
// line on stderr.
#include "oci/policy/firewall_rules.hpp"

#include <nftables/libnftables.h>
#include <sched.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

using namespace ocirun;

namespace {

[[noreturn]] void die(const std::string &msg) {
    std::fprintf(stderr, "oci-run-firewall: %s\n", msg.c_str());
    std::exit(2);
}

bool valid_id(const std::string &id) {
    if (id.empty() || id.size() > 1024 || id[0] == '.' || id[0] == '-' || id[0] == '_')
        return false;
    for (char c : id)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'))
            return false;
    return true;
}

class Nft {
  public:
    Nft() : ctx_(nft_ctx_new(NFT_CTX_DEFAULT)) {
        if (!ctx_) die("nft_ctx_new failed");
        nft_ctx_buffer_output(ctx_);
        nft_ctx_buffer_error(ctx_);
    }
    ~Nft() { nft_ctx_free(ctx_); }
    Nft(const Nft &) = delete;
    Nft &operator=(const Nft &) = delete;
    // True if the commands were applied; `out` and `err` what nft said.
    bool run(const std::string &cmd, std::string &out, std::string &err) {
        int r = nft_run_cmd_from_buffer(ctx_, cmd.c_str());
        const char *o = nft_ctx_get_output_buffer(ctx_);
        const char *e = nft_ctx_get_error_buffer(ctx_);
        out = o ? o : "";
        err = e ? e : "";
        return r == 0;
    }

  private:
    struct nft_ctx *ctx_;
};

// nft's first error line ("Error: Could not process rule: File exists").
std::string first_line(const std::string &s) {
    return s.substr(0, s.find('\n'));
}

const std::string kTableName = std::string(kFirewallFamily) + " " + kFirewallTable;

// The kernel's listing of the table, or "" when there is none.
std::string listing(Nft &nft) {
    std::string out, err;
    if (nft.run("list table " + kTableName, out, err)) return out;
    if (err.find("No such file or directory") != std::string::npos) return "";
    die("list table " + kTableName + ": " + first_line(err));
}

} // namespace

int main(int argc, char **argv) {
    if (argc < 3) die("usage: oci-run-firewall install|check ID NEED | remove ID (fd 3: netns)");
    std::string verb = argv[1], id = argv[2];
    if (!valid_id(id)) die("\"" + id + "\" is not a container ID");
    std::string need;
    if (verb == "install" || verb == "check") {
        if (argc != 4) die(verb + ": expected ID NEED");
        need = argv[3];
        if (need != "none" && need != "local" && need != "https" && need != "https+intercept")
            die("need \"" + need + "\": expected none, local, https or https+intercept");
    } else if (verb != "remove" || argc != 3) {
        die("unknown command \"" + verb + "\"");
    }
    if (::setns(3, CLONE_NEWNET) < 0)
        die(std::string("fd 3: setns into the network namespace: ") + std::strerror(errno));
    Nft nft;
    std::string out, err;
    if (verb == "install") {
        // In one batch: create fails if the table exists, and then nothing
        // of the rest is applied.
        // (The comment is a table's at creation only.)
        std::string table = firewall_table(id, need);
        std::string comment = table.substr(table.find("comment"));
        comment = comment.substr(0, comment.find('\n'));
        if (nft.run("create table " + kTableName + " { " + comment + "; }\n" + table, out, err))
            return 0;
        if (err.find("File exists") != std::string::npos) {
            std::printf("exists\n%s", listing(nft).c_str());
            return 3;
        }
        die("install table " + kTableName + ": " + first_line(err));
    }
    std::string seen = listing(nft);
    if (verb == "check") {
        if (seen.empty()) {
            std::printf("absent\n");
            return 1;
        }
        if (seen == firewall_table(id, need)) return 0;
        std::printf("differs\n%s", seen.c_str());
        return 1;
    }
    // remove: only the table this container installed.
    if (seen.empty()) return 0;
    auto owner = firewall_owner(seen);
    if (!owner || owner->id != id)
        die("the table " + kTableName + " is not container " + id + "'s (its comment names " +
            (owner ? owner->id : std::string("no container")) + "): left in place");
    if (!nft.run("delete table " + kTableName, out, err))
        die("delete table " + kTableName + ": " + first_line(err));
    return 0;
}
