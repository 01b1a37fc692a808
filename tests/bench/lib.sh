# Sourced by the benchmark scripts that run inside the testbed (tests/bench/*.sh).

# Prints the kernel initiator's block device for the first namespace of @nqn once it appears
# after an `nvme connect` (within 5 s), or says which script found none and fails.
kernel_bdev() { # script nqn
	local dev= sys i
	for ((i = 0; i < 50; i++)); do
		for sys in /sys/class/nvme-subsystem/nvme-subsys*; do
			[[ $(cat "$sys/subsysnqn") == "$2" ]] && dev=/dev/$(basename "$(ls -d "$sys"/nvme*n1 | head -1)")
		done
		[[ -b $dev ]] && { echo "$dev"; return 0; }
		sleep 0.1
	done
	echo "$1: no block device for $2" >&2
	return 1
}
