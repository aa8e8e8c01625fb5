# bash completion for l2tpv3ctl(8)                          -*- shell-script -*-
#
# Completes options, command words, argument keywords not given yet and the
# values of the arguments that take one of a few words; tunnel and session
# IDs and names come from the daemon (`l2tpv3ctl -j ... list`, 1 s timeout,
# silent when it is not reachable).  Abbreviated words already typed
# ("tun cr") are understood as l2tpv3ctl understands them.

# _l2tpv3ctl_match WORD CANDIDATE...: prints the candidate WORD names
# (itself, or the only one it is a prefix of); fails when there is none.
_l2tpv3ctl_match()
{
    local w=$1 c found=
    shift
    for c in "$@"; do
        if [[ $c == "$w" ]]; then
            printf '%s\n' "$c"
            return 0
        fi
        if [[ $c == "$w"* ]]; then
            [[ -n $found ]] && return 1
            found=$c
        fi
    done
    [[ -n $found ]] && printf '%s\n' "$found"
}

# _l2tpv3ctl_objects CMD tunnel|session id|name: IDs or names from the daemon.
_l2tpv3ctl_objects()
{
    local cmd=$1 kind=$2 what=$3 out
    out=$("$cmd" "${_l2tpv3ctl_opts[@]}" -j -t 1 "$kind" list 2>/dev/null) || return 0
    if [[ $what == id ]]; then
        sed -n "s/^ *\"${kind}_id\": *\\([0-9][0-9]*\\).*/\\1/p" <<<"$out"
    else
        sed -n 's/^ *"name": *"\([^"][^"]*\)",\{0,1\} *$/\1/p' <<<"$out"
    fi
}

# The grammar: per command, its arguments as KEYWORD:KIND, where KIND is
# flag (no value), word=V1/V2/... (one of these), tref (tunnel ID or
# "name NAME"), tid (a tunnel ID), file (a file's path), or any (a value we
# cannot guess).
# "@tunnel" / "@session": the command also takes an ID, or name NAME.
_l2tpv3ctl_args()
{
    case $1 in
    "tunnel create")
        echo peer:any pool:any local:any encap:word=udp/ip profile:any name:any secret:any \
            secret-file:file description:any digest:word=none/md5/sha1 hello:any \
            src-port:word=1701/ephemeral no-wait:flag ;;
    "tunnel delete") echo @tunnel result:any ;;
    "tunnel show") echo @tunnel ;;
    "session create")
        echo tunnel:tref profile:any name:any pw:word=eth/eth_vlan/ppp cookie:word=0/4/8 \
            l2spec:word=none/default seq:word=none/non-ip/all ifname:any \
            remote-end-id:any description:any no-wait:flag ;;
    "session delete") echo @session result:any ;;
    "session show") echo @session ;;
    "session list" | stats | "stats reset") echo tunnel:tref ;;
    monitor) echo reconnect:flag ;;
    esac
}

_l2tpv3ctl()
{
    local cur prev words cword
    if declare -F _init_completion >/dev/null; then
        _init_completion -n : || return
    else
        cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
        words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
    fi
    local prog=${words[0]} i=1 w
    _l2tpv3ctl_opts=()

    # options, which come before the command
    while ((i < cword)); do
        w=${words[i]}
        case $w in
        -s | --socket) _l2tpv3ctl_opts=(-s "${words[i+1]}"); ((i += 2)) ;;
        -t | --timeout | -b | --batch | -w | --window) ((i += 2)) ;;
        -*) ((i++)) ;;
        *) break ;;
        esac
    done
    if ((i >= cword)); then
        case $prev in
        -s | --socket)
            COMPREPLY=($(compgen -f -- "$cur"))
            return ;;
        -b | --batch)
            COMPREPLY=($(compgen -f -- "$cur") $(compgen -W - -- "$cur"))
            return ;;
        -t | --timeout | -w | --window) return ;;
        esac
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W '-s -j -t -b -w -h -V --socket --json --timeout
                --batch --window --help --version' -- "$cur"))
        else
            COMPREPLY=($(compgen -W 'tunnel session show stats metrics reload monitor' -- "$cur"))
        fi
        return
    fi

    # the command: one or two words
    local top sub cmd
    top=$(_l2tpv3ctl_match "${words[i]}" tunnel session show stats metrics reload monitor) || return
    ((i++))
    case $top in
    tunnel | session | show)
        local subs='create delete show list'
        [[ $top == show ]] && subs=daemon
        if ((i == cword)); then
            COMPREPLY=($(compgen -W "$subs" -- "$cur"))
            return
        fi
        sub=$(_l2tpv3ctl_match "${words[i]}" $subs) || return
        ((i++))
        cmd="$top $sub" ;;
    stats)
        # "stats" is a command, and "stats reset" one too
        if ((i == cword)); then
            COMPREPLY=($(compgen -W "reset tunnel" -- "$cur"))
            return
        fi
        cmd=stats
        if [[ $(_l2tpv3ctl_match "${words[i]}" reset) == reset ]]; then
            cmd="stats reset"
            ((i++))
        fi ;;
    *) cmd=$top ;;
    esac

    local args=($(_l2tpv3ctl_args "$cmd")) kws=() a kind used=" " ref=
    ((${#args[@]})) || return
    for a in "${args[@]}"; do
        [[ $a == @* ]] && ref=${a#@} || kws+=("${a%%:*}")
    done
    [[ -n $ref ]] && kws+=(name)

    # the arguments so far: which are given, and does the cursor sit on a value?
    local want= obj=
    while ((i < cword)); do
        w=${words[i]}
        ((i++))
        if [[ -n $ref && $w == [0-9]* ]]; then
            used+="name "
            continue
        fi
        [[ $w == --no-wait || $w == --reconnect ]] && w=${w#--}
        a=$(_l2tpv3ctl_match "$w" "${kws[@]}") || continue
        used+="$a "
        if [[ -n $ref && $a == name ]]; then
            kind="names:$ref"
        else
            kind=$(printf '%s\n' "${args[@]}" | sed -n "s/^$a://p")
        fi
        [[ $kind == flag ]] && continue
        if ((i == cword)); then
            want=$kind
            break
        fi
        # "tunnel name NAME" takes two words
        if [[ $kind == tref ]] && [[ $(_l2tpv3ctl_match "${words[i]}" name) == name ]]; then
            ((i++))
            ((i == cword)) && { want=names:tunnel; break; }
        fi
        ((i++))
    done

    case $want in
    word=*)
        COMPREPLY=($(compgen -W "$(tr / ' ' <<<"${want#word=}")" -- "$cur")) ;;
    tref)
        COMPREPLY=($(compgen -W "name $(_l2tpv3ctl_objects "$prog" tunnel id)" -- "$cur")) ;;
    tid)
        COMPREPLY=($(compgen -W "$(_l2tpv3ctl_objects "$prog" tunnel id)" -- "$cur")) ;;
    names:*)
        local IFS=$'\n'
        COMPREPLY=($(compgen -W "$(_l2tpv3ctl_objects "$prog" "${want#names:}" name)" -- "$cur")) ;;
    file)
        local IFS=$'\n'
        COMPREPLY=($(compgen -f -- "$cur")) ;;
    any) ;;
    *)
        local left=()
        for a in "${kws[@]}"; do
            [[ $used == *" $a "* ]] || left+=("$a")
        done
        # an ID may stand instead of "name NAME"
        if [[ -n $ref && $used != *" name "* ]]; then
            left+=($(_l2tpv3ctl_objects "$prog" "$ref" id))
        fi
        COMPREPLY=($(compgen -W "${left[*]}" -- "$cur")) ;;
    esac
}
complete -F _l2tpv3ctl l2tpv3ctl
