# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
# Sourced by contrib/nvmefs-testbed and contrib/build-libfuse (POSIX sh), which fetch packages
# from suites the host does not use (trixie-backports, sid) through private apt lists: from the
# Debian archive the host's own apt sources name, so that a machine that reaches Debian through
# its own mirror works, and the tree names no mirror host.

# debian_mirror [APT_ETC]: prints the URI of the Debian archive that APT_ETC's sources (default
# /etc/apt: sources.list, sources.list.d/*.list one-line entries, sources.list.d/*.sources deb822
# stanzas, in the order apt reads them) take Debian's main suite from: the first enabled deb or
# deb-src entry with the component main and a bare suite (bookworm, sid; not bookworm-security,
# bookworm-updates, bookworm/updates). NVMEFS_DEBIAN_MIRROR, when set, is taken instead. Fails
# with a one-line message when there is none.
debian_mirror() (
	if [ -n "${NVMEFS_DEBIAN_MIRROR:-}" ]; then
		printf '%s\n' "${NVMEFS_DEBIAN_MIRROR%/}"
		return 0
	fi
	etc=${1:-/etc/apt}
	set --
	for f in "$etc/sources.list" "$etc"/sources.list.d/*.list "$etc"/sources.list.d/*.sources; do
		[ -f "$f" ] && set -- "$@" "$f"
	done
	if [ $# -gt 0 ] && awk '
		function main_suite(s) { return s !~ /[-\/]/ }
		function take(uri, suite, comps) {
			if (found == "" && uri !~ /^cdrom:/ && main_suite(suite) && (" " comps " ") ~ / main /)
				found = uri
		}
		function flush(   n, u, s, i) {
			if (types ~ /(^| )deb(-src)?( |$)/ && tolower(enabled) != "no") {
				n = split(uris, u, " ")
				split(suites, s, " ")
				for (i in s)
					if (n)
						take(u[1], s[i], comps)
			}
			types = uris = suites = comps = enabled = ""
		}
		FNR == 1 { flush(); deb822 = FILENAME ~ /\.sources$/ }
		deb822 && /^[ \t]*#/ { next }
		deb822 && /^[ \t]*$/ { flush(); next }
		deb822 && /^[^ \t]/ && index($0, ":") {
			key = tolower(substr($0, 1, index($0, ":") - 1))
			val = substr($0, index($0, ":") + 1)
			gsub(/[ \t]+/, " ", val)
			sub(/^ /, "", val)
			sub(/ $/, "", val)
			if (key == "types") types = val
			else if (key == "uris") uris = val
			else if (key == "suites") suites = val
			else if (key == "components") comps = val
			else if (key == "enabled") enabled = val
			next
		}
		deb822 { next }
		{
			sub(/#.*/, "")
			if ($1 != "deb" && $1 != "deb-src")
				next
			i = 2
			if ($i ~ /^\[/)
				while (i <= NF && $i !~ /\]$/)
					i++
			if ($i ~ /^\[/ || $i ~ /\]$/)
				i++
			comps = ""
			for (j = i + 2; j <= NF; j++)
				comps = comps " " $j
			take($i, $(i + 1), comps)
			comps = ""
		}
		END {
			flush()
			if (found == "")
				exit 1
			sub(/\/$/, "", found)
			print found
		}' "$@"; then
		return 0
	fi
	echo "no Debian archive with the main suite in the apt sources of $etc: give the URI of a Debian archive (as a deb line has it) in NVMEFS_DEBIAN_MIRROR" >&2
	return 1
)
