# SPDX-License-Identifier: GPL-2.0-or-later
# bash completion for fabricd(8): every subcommand and its options.
# Installed as /usr/share/bash-completion/completions/fabricd.

_fabricd()
{
	local cur prev words cword
	_init_completion || return

	local commands="check render plan apply run status down set-transport genkey pubkey bench init join leave zone vnet import-pve"
	# --psk-dir, --ifupdown-file, --grace and --lock-wait only where they are read (fabricd
	# refuses them elsewhere: --lock-wait is for the commands that change a node or edit the
	# definition, not render, plan or status; --frr-pathspace not for render, which reads no FRR;
	# --key-file and --wg-backend not for render, nor --key-file for down: they read neither)
	local node_opts="-c --config -n --node --key-file --wg-backend --verbose --help --frr-pathspace"

	# options may stand before the command (fabricd -c FILE check): the command is the
	# first word that is neither an option nor an option's value; ci is its index
	local cmd="" ci=1
	while ((ci < cword)); do
		case ${words[ci]} in
		-c | --config | -n | --node | --key-file | --wg-backend | --grace | --end-grace | \
			--lock-wait | --probe-interval | --metrics-file-interval | --frr-pathspace | --ifupdown-file | \
			--psk-dir | --metrics | --metrics-file | --probe-file | --cluster | --prefix | \
			--listen-port | --underlay | --sdn-dir | --corosync)
			((ci += 2))
			# bash splits --config=FILE at the '='
			[[ ${words[ci - 1]} == = ]] && ((ci++))
			;;
		-*) ((ci++)) ;;
		*)
			cmd=${words[ci]}
			break
			;;
		esac
	done

	if ((cword == 1)); then
		COMPREPLY=($(compgen -W "$commands --version --help" -- "$cur"))
		return
	fi

	case $prev in
	-c | --config | --key-file | --json | --svg | --metrics-file | --probe-file | \
		--ifupdown-file | --corosync | --output | -o | --key-out | --wg-keys)
		# bench's --json takes a FILE; elsewhere --json is a flag (handled below)
		if [[ $prev != --json || $cmd == bench ]]; then
			_filedir
			return
		fi
		;;
	--psk-dir | --sdn-dir | --generate-keys)
		_filedir -d
		return
		;;
	--wg-backend)
		COMPREPLY=($(compgen -W "auto kernel userspace" -- "$cur"))
		return
		;;
	--transport | --simple)
		COMPREPLY=($(compgen -W "plain secure" -- "$cur"))
		return
		;;
	--vnet | --nodes | --zone | --pve-zone | --end-grace)
		return
		;;
	-n | --node | --cluster | --prefix | --listen-port | --underlay | --grace | \
		--duration | --streams | --repeat | --lock-wait | --frr-pathspace | --metrics | \
		--probe-interval | --metrics-file-interval | --underlay-mtu)
		return
		;;
	esac

	if [[ -z $cmd ]]; then
		# after options, where the command goes: the command, or another shared option
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$node_opts --json" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$commands" -- "$cur"))
		fi
		return
	fi

	local opts
	case $cmd in
	check) opts="-c --config --json --verbose --help" ;;
	render) opts="-c --config -n --node --verbose --help --json --sdn-dir --corosync" ;;
	status) opts="$node_opts --json --dot --svg --probe-file --grace --end-grace --sdn-dir --corosync" ;;
	plan) opts="$node_opts --json --grace --end-grace --psk-dir --sdn-dir --corosync" ;;
	apply) opts="$node_opts --lock-wait --grace --end-grace --psk-dir --ifupdown-file --sdn-dir --corosync" ;;
	down) opts="${node_opts/ --key-file/} --lock-wait --cluster --ifupdown-file --probe-file --sdn-dir --corosync" ;;
	run) opts="$node_opts --lock-wait --grace --psk-dir --ifupdown-file --metrics --metrics-file --metrics-file-interval --probe-interval --probe-file --sdn-dir --corosync" ;;
	import-pve) opts="--sdn-dir --corosync --pending -o --output --partial --key-out --wg-keys -n --node --underlay-mtu --generate-keys --simple --verbose --help" ;;
	set-transport)
		opts="-c --config --lock-wait --verbose --help"
		local positional=0 i
		for ((i = ci + 1; i < cword; i++)); do
			case ${words[i]} in
			-c | --config) ((i++)) ;;
			-*) ;;
			*) ((positional++)) ;;
			esac
		done
		if [[ $cur != -* ]] && ((positional == 1)); then
			COMPREPLY=($(compgen -W "plain secure" -- "$cur"))
			return
		fi
		;;
	genkey) opts="--help" ;;
	pubkey) opts="--key-file --help" ;;
	bench) opts="--duration --streams --repeat --json --svg --quick --reference --wg-backend --verbose --help --control-plane --nodes --vnis" ;;
	init) opts="-c --config --lock-wait --cluster --prefix --listen-port -n --node --underlay --key-file --verbose --help" ;;
	join) opts="-c --config --lock-wait -n --node --underlay --key-file --rotate-key --verbose --help" ;;
	leave) opts="-c --config --lock-wait -n --node --verbose --help" ;;
	zone | vnet)
		if ((cword == ci + 1)) && [[ $cur != -* ]]; then
			COMPREPLY=($(compgen -W "add remove" -- "$cur"))
			return
		fi
		opts="-c --config --lock-wait --verbose --help"
		# add's own options (all of them before the action is given)
		if [[ ${words[ci + 1]} != remove ]]; then
			[[ $cmd == zone ]] && opts="$opts --transport --vnet --nodes --pve-zone"
			[[ $cmd == vnet ]] && opts="$opts --zone"
		fi
		;;
	*) opts="" ;;
	esac
	COMPREPLY=($(compgen -W "$opts" -- "$cur"))
} &&
	complete -F _fabricd fabricd
