# bash completion for oci-run(8)
#
# Completes the commands, the global options, each command's options and
# their values, container IDs (from `oci-run [--root DIR] list`, so a --root
# on the command line is honoured) and kill's signal names. The option lists
# follow src/cli/main.cpp and src/cli/cmd_*.cpp; keep them in step.
#
# Installed as $datadir/bash-completion/completions/oci-run; to try it from
# a checkout: source contrib/completion/oci-run.bash

_oci_run_commands="create start run state kill delete list exec ps pause resume events update report features spec checkpoint restore help"

# The options of command $1: sets `bool` (no value) and `valued` (takes one),
# short and long forms, space-separated.
_oci_run_options() {
    bool="-h --help"
    valued=""
    case $1 in
    create)
        bool+=" --no-pivot --no-new-keyring"
        valued="-b --bundle --pid-file --console-socket --preserve-fds" ;;
    run)
        bool+=" -d --detach --keep --no-pivot --no-new-keyring"
        valued="-b --bundle --pid-file --console-socket --preserve-fds" ;;
    kill) bool+=" -a --all" ;;
    delete) bool+=" -f --force" ;;
    list)
        bool+=" -q --quiet"
        valued="-f --format" ;;
    exec)
        bool+=" -t --tty -d --detach --no-new-privs --ignore-paused"
        valued="-p --process --console-socket --pid-file -e --env --cwd -u --user -c --cap --preserve-fds -g --additional-gids" ;;
    ps) valued="-f --format" ;;
    events)
        bool+=" --stats"
        valued="--interval" ;;
    update)
        valued="-r --resources --blkio-weight --cpu-period --cpu-quota --cpu-share --cpu-rt-period --cpu-rt-runtime --cpuset-cpus --cpuset-mems --memory --memory-reservation --memory-swap --kernel-memory --kernel-memory-tcp --pids-limit --l3-cache-schema --mem-bw-schema" ;;
    report) valued="-f --format -b --bundle" ;;
    spec)
        bool+=" --rootless"
        valued="-b --bundle" ;;
    esac
}

# Is $1 one of the space-separated words in $2?
_oci_run_in() {
    [[ " $2 " == *" $1 "* ]]
}

# COMPREPLY from words, matched against $cur.
_oci_run_words() {
    mapfile -t COMPREPLY < <(compgen -W "$1" -- "$cur")
}

_oci_run_files() {
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}

_oci_run_dirs() {
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -d -- "$cur")
}

# Container IDs from `list`, optionally only those whose status is one of $1.
_oci_run_ids() {
    local want=$1 bin=${words[0]} out
    # shellcheck disable=SC2088 # the word as typed: expand its ~ here
    [[ $bin == "~/"* ]] && bin=$HOME/${bin#"~/"}
    command -v -- "$bin" >/dev/null 2>&1 || bin=oci-run
    command -v -- "$bin" >/dev/null 2>&1 || return
    local -a args=()
    [[ -n $root ]] && args=(--root "$root")
    # The table: ID PID STATUS BUNDLE CREATED OWNER (IDs never hold spaces).
    out=$("$bin" "${args[@]}" list 2>/dev/null | awk -v want=" $want " \
        'NR > 1 && (want == "  " || index(want, " " $3 " ")) { print $1 }')
    _oci_run_words "$out"
}

# The value of option $1, given in its long form (see _oci_run_long).
_oci_run_value() {
    local opt=$1
    case $opt in
    --root | --bundle) _oci_run_dirs ;;
    --log | --process | --pid-file | --console-socket | --criu) _oci_run_files ;;
    --resources)
        _oci_run_files
        [[ -z $cur || $cur == - ]] && COMPREPLY+=(-) ;;
    --log-format) _oci_run_words "text json" ;;
    --rootless) _oci_run_words "true false auto" ;;
    --cgroup-manager) _oci_run_words "cgroupfs systemd disabled" ;;
    --format) _oci_run_words "table json" ;;
    --cap)
        _oci_run_words "CAP_CHOWN CAP_DAC_OVERRIDE CAP_DAC_READ_SEARCH CAP_FOWNER CAP_FSETID CAP_KILL CAP_SETGID CAP_SETUID CAP_SETPCAP CAP_LINUX_IMMUTABLE CAP_NET_BIND_SERVICE CAP_NET_BROADCAST CAP_NET_ADMIN CAP_NET_RAW CAP_IPC_LOCK CAP_IPC_OWNER CAP_SYS_MODULE CAP_SYS_RAWIO CAP_SYS_CHROOT CAP_SYS_PTRACE CAP_SYS_PACCT CAP_SYS_ADMIN CAP_SYS_BOOT CAP_SYS_NICE CAP_SYS_RESOURCE CAP_SYS_TIME CAP_SYS_TTY_CONFIG CAP_MKNOD CAP_LEASE CAP_AUDIT_WRITE CAP_AUDIT_CONTROL CAP_SETFCAP CAP_MAC_OVERRIDE CAP_MAC_ADMIN CAP_SYSLOG CAP_WAKE_ALARM CAP_BLOCK_SUSPEND CAP_AUDIT_READ CAP_PERFMON CAP_BPF CAP_CHECKPOINT_RESTORE" ;;
    --interval) _oci_run_words "100ms 500ms 1s 5s 10s 1m" ;;
    *) COMPREPLY=() ;; # a number, a user, a path inside the container...
    esac
}

_oci_run() {
    COMPREPLY=()
    # COMP_WORDS, with "--opt" "=" "value" (split at '=' by readline) joined
    # back into one word.
    local -a words=()
    local cword=0 i w glue=0
    for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
        w=${COMP_WORDS[i]}
        if [[ $w == "=" && ${#words[@]} -gt 0 && ${words[-1]} == -?* && ${words[-1]} != *=* ]]; then
            words[-1]+="="
            glue=1
        elif ((glue)); then
            words[-1]+=$w
            glue=0
        else
            words+=("$w")
        fi
        ((i == COMP_CWORD)) && cword=$((${#words[@]} - 1))
    done
    local cur=${words[cword]} prefix="" inline=""

    # --opt=value in the word being completed: complete the value. When '='
    # breaks words, readline replaces only the part after it; otherwise the
    # "--opt=" is put back in front of each candidate.
    if [[ $cur == -?*=* ]]; then
        inline=${cur%%=*}
        [[ $COMP_WORDBREAKS != *=* ]] && prefix="$inline="
        cur=${cur#*=}
    fi

    # Global options up to the command (getopt stops at the first non-option).
    local root="" cmd="" cmd_at=0 expect=""
    for ((i = 1; i < cword; i++)); do
        w=${words[i]}
        if [[ -n $expect ]]; then
            [[ $expect == --root ]] && root=$w
            expect=""
            continue
        fi
        case $w in
        --root=* | -root=*) root=${w#*=} ;;
        --root | -root | --log | -log | --log-format | -log-format | --rootless | -rootless | --cgroup-manager | -cgroup-manager | --criu | -criu)
            expect=$(_oci_run_long "$w") ;;
        -*) ;;
        *)
            cmd=$w
            cmd_at=$i
            break
            ;;
        esac
    done
    # shellcheck disable=SC2088 # the word as typed: expand its ~ here
    [[ $root == "~/"* ]] && root=$HOME/${root#"~/"}

    if [[ -z $cmd ]]; then
        if [[ -n $inline ]]; then
            _oci_run_value "$(_oci_run_long "$inline")"
        elif [[ -n $expect ]]; then
            _oci_run_value "$expect"
        elif [[ $cur == -* ]]; then
            _oci_run_words "--root --log --log-format --debug --systemd-cgroup --cgroup-manager --rootless --criu --version --help"
        else
            _oci_run_words "$_oci_run_commands"
        fi
        _oci_run_prefix
        return
    fi

    if [[ $cmd == help ]]; then
        ((cword == cmd_at + 1)) && _oci_run_words "${_oci_run_commands% help}"
        return
    fi

    # The command's options; count its positional arguments before the
    # cursor. exec and ps stop taking options at the ID (what follows is the
    # container's command or ps's arguments); the others take them anywhere.
    local bool valued
    _oci_run_options "$cmd"
    local npos=0 dashdash=0 stop=0 bundle=0
    [[ $cmd == exec || $cmd == ps ]] && stop=1
    expect=""
    for ((i = cmd_at + 1; i < cword; i++)); do
        w=${words[i]}
        if [[ -n $expect ]]; then
            expect=""
            continue
        fi
        if ((!dashdash && !(stop && npos > 0))) && [[ $w == -?* ]]; then
            [[ $w == -- ]] && { dashdash=1; continue; }
            w=$(_oci_run_long "${w%%=*}")
            [[ $w == --bundle ]] && bundle=1
            [[ ${words[i]} != *=* ]] && _oci_run_in "$w" "$valued" && expect=$w
            continue
        fi
        ((npos++))
    done

    if [[ -n $inline ]]; then
        _oci_run_value "$(_oci_run_long "$inline")"
        _oci_run_prefix
        return
    fi
    if [[ -n $expect ]]; then
        _oci_run_value "$expect"
        return
    fi
    if ((!dashdash && !(stop && npos > 0))) && [[ $cur == -* ]]; then
        local longs="" o
        for o in $bool $valued; do
            [[ $o == --* ]] && longs+=" $o"
        done
        _oci_run_words "$longs"
        return
    fi

    local alive="created running paused"
    case $cmd in
    start) ((npos == 0)) && _oci_run_ids "created" ;;
    pause) ((npos == 0)) && _oci_run_ids "running" ;;
    resume) ((npos == 0)) && _oci_run_ids "paused" ;;
    state | delete | ps) ((npos == 0)) && _oci_run_ids "" ;;
    exec | events | update | checkpoint) ((npos == 0)) && _oci_run_ids "$alive" ;;
    report) ((npos == 0 && !bundle)) && _oci_run_ids "$alive" ;;
    kill)
        if ((npos == 0)); then
            _oci_run_ids "$alive"
        elif ((npos == 1)); then
            local sigs="HUP INT QUIT ILL TRAP ABRT IOT BUS FPE KILL USR1 SEGV USR2 PIPE ALRM TERM STKFLT CHLD CONT STOP TSTP TTIN TTOU URG XCPU XFSZ VTALRM PROF WINCH IO POLL PWR SYS RTMIN RTMAX"
            # Names are taken in any case; offered in capitals.
            local cur=${cur^^}
            # With or without SIG: both once something is typed.
            # shellcheck disable=SC2086 # one argument per name
            [[ -n $cur ]] && sigs+=" $(printf 'SIG%s ' $sigs)"
            _oci_run_words "$sigs"
        fi
        ;;
    *) ;; # create, run: a new ID; list, features, spec, restore: nothing
    esac
}

# The long form of a short option (-b -> --bundle); single-dash long
# options (-bundle, accepted by getopt_long_only) get their second dash.
_oci_run_long() {
    case $1 in
    -b) echo --bundle ;;
    -d) echo --detach ;;
    -p) echo --process ;;
    -e) echo --env ;;
    -u) echo --user ;;
    -c) echo --cap ;;
    -g) echo --additional-gids ;;
    -f) echo --format ;;
    -r) echo --resources ;;
    -t) echo --tty ;;
    -a) echo --all ;;
    -q) echo --quiet ;;
    -h) echo --help ;;
    --*) echo "$1" ;;
    -?*) echo "-$1" ;;
    *) echo "$1" ;;
    esac
}

# Put back the "--opt=" that readline keeps when '=' does not break words.
_oci_run_prefix() {
    [[ -z $prefix ]] && return
    local i
    for i in "${!COMPREPLY[@]}"; do
        COMPREPLY[i]=$prefix${COMPREPLY[i]}
    done
}

complete -F _oci_run oci-run
