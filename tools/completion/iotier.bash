# SPDX-License-Identifier: MIT
# bash completion for iotier: subcommands, flags and flag values (classes, --format, --by,
# --log, --cgroup, --attach, --op), block devices for -d, pids for `threads`, and the command
# and its arguments after `run`/`check`. Nothing is listed here: at every TAB the script reads
# `iotier --help` and `iotier SUB --help` (an option table, one option per entry, values named
# in its description), so it follows the CLI it is completing and cannot drift from it.
# Installed as PREFIX/share/bash-completion/completions/iotier, loaded on first use.

# The help text's option table, one line per option: opt;short;long;arg;values (';' since
# bash's read joins empty fields between tabs), where values are the choices the description names ("off, warn (default) or
# debug", "class|level", "be:0..be:7"); then pos TAB KIND for each positional of the usage
# line (PID, CMD). The examples at the end are not options.
_iotier_help_table_awk='
function expand(list,   n, w, i, out, p, a, b, k) {
	n = split(list, w, " ")
	out = ""
	for (i = 1; i <= n; i++) {
		if (w[i] ~ /^[a-z]+:[0-9]\.\.[a-z]+:[0-9]$/) {
			p = substr(w[i], 1, index(w[i], ":"))
			a = substr(w[i], length(p) + 1, 1) + 0
			b = substr(w[i], length(w[i]), 1) + 0
		} else if (w[i] ~ /^[a-z]+:N$/) {
			p = substr(w[i], 1, length(w[i]) - 1); a = 0; b = 7
		} else {
			out = out " " w[i]; continue
		}
		for (k = a; k <= b; k++) out = out " " p k
	}
	return substr(out, 2)
}
function listed(d,   n, seg, i, s) {
	while (match(d, /\([^()]*\)/)) d = substr(d, 1, RSTART - 1) substr(d, RSTART + RLENGTH)
	gsub(/; /, ": ", d)
	n = split(d, seg, /: /)
	for (i = 1; i <= n; i++) {
		s = seg[i]
		gsub(/ +/, " ", s); gsub(/ ,/, ",", s); gsub(/^ | $/, "", s); sub(/\.$/, "", s)
		if (s !~ /^[a-z][a-zA-Z0-9_:.]*(, [a-z][a-zA-Z0-9_:.]*)*(,? or [a-z][a-zA-Z0-9_:.]*)?$/)
			continue
		if (s !~ /,| or /)
			continue
		gsub(/,? or |, /, " ", s)
		return expand(s)
	}
	return ""
}
function flush(   vals) {
	if (long != "" || short != "") {
		vals = ""
		if (arg ~ /\|/) { vals = arg; gsub(/\|/, " ", vals) }
		else if (arg != "") vals = listed(desc)
		print "opt;" short ";" long ";" arg ";" vals
	}
	short = long = arg = desc = ""
}
/^examples:/ { exit }
/^usage: / && !seen_usage {
	seen_usage = 1
	u = $0
	while (match(u, /\[[^]]*\]/)) u = substr(u, 1, RSTART - 1) substr(u, RSTART + RLENGTH)
	n = split(u, t, " ")
	for (i = 4; i <= n; i++) if (t[i] ~ /^[A-Z]+$/) print "pos;" t[i]
	next
}
{
	match($0, /^ */)
	indent = RLENGTH
	line = substr($0, indent + 1)
}
indent >= 1 && indent <= 8 && line ~ /^-/ {
	flush()
	if (line ~ /^-[A-Za-z0-9], /) { short = substr(line, 1, 2); line = substr(line, 5) }
	if (match(line, /^--[a-z0-9-]+/)) { long = substr(line, 1, RLENGTH); line = substr(line, RLENGTH + 1) }
	if (line ~ /^ [A-Z]+( |$)/ || line ~ /^ [a-z]+(\|[a-z]+)+( |$)/) {
		match(line, /^ [^ ]+/); arg = substr(line, 2, RLENGTH - 1); line = substr(line, RLENGTH + 1)
	}
	desc = line
	next
}
indent > 8 && (long != "" || short != "") { desc = desc " " line; next }
{ flush() }
END { flush() }
'

# The subcommands that `iotier --help` lists under "commands:".
_iotier_subcommands()
{
	"$1" --help 2>/dev/null | awk '/^commands:/ { on = 1; next } on && /^$/ { exit } on { print $1 }'
}

# Completions for one option value of kind $1 (the help's placeholder) and choices $2.
_iotier_values()
{
	local kind=$1 choices=$2 cur=$3 head=""
	case $kind in
	DEV)
		local devs=(/sys/class/block/*)
		mapfile -t COMPREPLY < <(compgen -W "${devs[*]##*/}" -- "$cur")
		if [[ $cur == /* ]]; then
			compopt -o filenames 2>/dev/null
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		fi
		;;
	PID) mapfile -t COMPREPLY < <(compgen -W "$(cd /proc && printf '%s\n' [0-9]*)" -- "$cur") ;;
	FILE)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		;;
	PATH)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		;;
	*)
		# A LIST is comma-separated: complete the item after the last comma.
		if [[ $kind == LIST && $cur == *,* ]]; then
			head=${cur%,*},
			cur=${cur##*,}
		fi
		[[ -n $choices ]] && mapfile -t COMPREPLY < <(compgen -P "$head" -W "$choices" -- "$cur")
		;;
	esac
}

# bash splits words at COMP_WORDBREAKS (':' and '=' among them), but values such as be:7,
# rocksdb:low* and --format=json are one word to iotier: re-split the line at blanks, and
# strip from each reply what bash keeps in front of the word it replaces.
_iotier_trim_wordbreak()
{
	local cur=$1 i keep=""
	for ((i = ${#cur} - 1; i >= 0; i--)); do
		if [[ ${cur:i:1} == [:=] && $COMP_WORDBREAKS == *"${cur:i:1}"* ]]; then
			keep=${cur:0:i+1}
			break
		fi
	done
	[[ -n $keep ]] && COMPREPLY=("${COMPREPLY[@]#"$keep"}")
}

# The command that `run`/`check` start, from word $1 on: bash-completion's own completion
# for that command when it is there and the word lists agree, else commands, then files.
_iotier_command()
{
	local start=$1 cword=$2 cur=$3
	if declare -F _command_offset >/dev/null && ((${#COMP_WORDS[@]} == cword + 1)); then
		_command_offset "$start"
	elif ((cword == start)); then
		mapfile -t COMPREPLY < <(compgen -c -- "$cur")
	else
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
	fi
}

# Split $1 (the line up to the cursor) into the array `words` at unquoted blanks, quotes
# removed, as iotier will see its argv; the last word is the one being completed.
_iotier_split_line()
{
	local line=$1 c word="" quote="" i
	words=()
	for ((i = 0; i < ${#line}; i++)); do
		c=${line:i:1}
		if [[ -n $quote ]]; then
			if [[ $c == "$quote" ]]; then
				quote=""
			elif [[ $c == \\ && $quote == '"' && $((i + 1)) -lt ${#line} ]]; then
				word+=${line:i+1:1}; ((i++))
			else
				word+=$c
			fi
		elif [[ $c == [\'\"] ]]; then
			quote=$c
		elif [[ $c == \\ && $((i + 1)) -lt ${#line} ]]; then
			word+=${line:i+1:1}; ((i++))
		elif [[ $c == [[:space:]] ]]; then
			[[ -n $word ]] && words+=("$word")
			word=""
		else
			word+=$c
		fi
	done
	words+=("$word")
}

_iotier()
{
	local iotier=${COMP_WORDS[0]}
	local -a words
	_iotier_split_line "${COMP_LINE:0:COMP_POINT}"
	local cword=$((${#words[@]} - 1)) cur=${words[${#words[@]} - 1]}
	COMPREPLY=()

	if ((cword == 1)); then
		mapfile -t COMPREPLY < <(compgen -W "$(_iotier_subcommands "$iotier") help --help --version" -- "$cur")
		return
	fi
	local sub=${words[1]}
	if [[ $sub == help ]]; then
		((cword == 2)) && mapfile -t COMPREPLY < <(compgen -W "$(_iotier_subcommands "$iotier")" -- "$cur")
		return
	fi

	local -A arg_of choices_of
	local -a names positionals
	local kind short long arg values
	while IFS=';' read -r kind short long arg values; do
		if [[ $kind == pos ]]; then
			positionals+=("$short")
			continue
		fi
		for name in $short $long; do
			names+=("$name")
			arg_of[$name]=$arg
			choices_of[$name]=$values
		done
	done < <("$iotier" "$sub" --help 2>/dev/null | awk "$_iotier_help_table_awk")

	# Walk the words before the cursor: option values, `--`, and the positional word where a
	# command starts.
	local i word npos=0
	for ((i = 2; i < cword; i++)); do
		word=${words[i]}
		if [[ $word == -- ]]; then
			_iotier_command $((i + 1)) "$cword" "$cur"
			return
		elif [[ $word == --*=* ]]; then
			continue
		elif [[ $word == -* ]]; then
			[[ -n ${arg_of[$word]:-} ]] && ((i++))
		elif [[ ${positionals[npos]:-} == CMD ]]; then
			_iotier_command "$i" "$cword" "$cur"
			return
		else
			((npos++))
		fi
	done

	local prev=${words[cword - 1]}
	if [[ $cur == --*=* && -n ${arg_of[${cur%%=*}]:-} ]]; then
		_iotier_values "${arg_of[${cur%%=*}]}" "${choices_of[${cur%%=*}]}" "${cur#*=}"
		COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
	elif [[ $prev == -* && -n ${arg_of[$prev]:-} ]]; then
		_iotier_values "${arg_of[$prev]}" "${choices_of[$prev]}" "$cur"
	elif [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "${names[*]} --help" -- "$cur")
	elif [[ ${positionals[npos]:-} == CMD ]]; then
		_iotier_command "$cword" "$cword" "$cur"
		return
	elif [[ -n ${positionals[npos]:-} ]]; then
		_iotier_values "${positionals[npos]}" "" "$cur"
	fi
	_iotier_trim_wordbreak "$cur"
}

complete -F _iotier iotier
