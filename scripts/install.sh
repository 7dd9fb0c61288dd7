#!/bin/sh
# Installs docverify as a systemd service. POSIX sh; idempotent: a second run with the same
# binary changes nothing, and an existing master key or environment file is never replaced.
#
#   sudo scripts/install.sh [BINARY] [--enable] [--root DIR] [--no-user]
#
#   BINARY      the executable to install (default: dist/docverify beside this script's repository)
#   --enable    also `systemctl enable --now docverify` (otherwise nothing is started or enabled)
#   --root DIR  install into DIR as if it were / (a staging root: packaging, images, tests);
#               accounts go into DIR/etc/passwd and DIR/etc/group, systemctl is not called
#   --no-user   do not create the docverify user and group (they exist already, or, with --root
#               and without root, cannot be created); files are then not given to the group
#
# What it puts in place (see docs/operations.md):
#   /usr/local/bin/docverify                              0755 root:root
#   /etc/docverify/                                       0755 root:root
#   /etc/docverify/docverify.env                          0640 root:docverify  settings, all commented
#   /etc/docverify/credentials/                           0700 root:root
#   /etc/docverify/credentials/master-key                 0600 root:root       32 random bytes, hex; made once
#   /etc/systemd/system/docverify.service                 0644 root:root
#   /etc/systemd/system/docverify.service.d/ledger-operator-key.conf   only when
#                                                         /etc/docverify/credentials/ledger-operator-key exists
#   /etc/systemd/system/docverify.service.d/database-password.conf     only when
#                                                         /etc/docverify/credentials/database-password exists
#   /usr/local/share/doc/docverify/{README.md,operations.md}
# and a system user and group docverify (no login shell, no home). The data folder
# /var/lib/docverify is made by systemd (StateDirectory=) at the first start.
set -eu

here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
repo=$(dirname -- "$here")

binary=""
enable=no
root=""
make_user=yes

usage() {
	sed -n '5,14p' "$0" | sed 's/^# \{0,1\}//' >&2
}
die() {
	echo "install.sh: $*" >&2
	exit 1
}
bad_usage() {
	echo "install.sh: $*" >&2
	usage
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	--enable) enable=yes ;;
	--no-user) make_user=no ;;
	--root)
		[ $# -ge 2 ] || bad_usage "--root needs a folder"
		root=$2
		shift
		;;
	--root=*) root=${1#--root=} ;;
	-h | --help)
		usage
		exit 0
		;;
	-*) bad_usage "unknown option $1" ;;
	*)
		[ -z "$binary" ] || bad_usage "unexpected argument $1 (the binary is already $binary)"
		binary=$1
		;;
	esac
	shift
done

[ -n "$binary" ] || binary=$repo/dist/docverify
[ -f "$binary" ] || die "no executable at $binary (build it with: npm run build)"
[ -x "$binary" ] || die "$binary is not executable"
unit_src=$repo/systemd/docverify.service
[ -f "$unit_src" ] || die "no unit file at $unit_src"

if [ -n "$root" ]; then
	[ -d "$root" ] || die "--root $root is not a folder"
	root=$(CDPATH= cd -- "$root" && pwd)
	[ "$root" != / ] || root=""
fi
if [ -n "$root" ] && [ "$enable" = yes ]; then
	bad_usage "--enable cannot be combined with --root (systemctl manages this machine, not the staging root)"
fi

is_root=no
[ "$(id -u)" -eq 0 ] && is_root=yes
if [ "$is_root" = no ]; then
	[ -n "$root" ] || die "run as root (or stage into a folder with --root DIR)"
	[ "$make_user" = no ] || die "creating the docverify user needs root; pass --no-user to stage without it"
fi

changes=0
say() { echo "install.sh: $*"; }
changed() {
	changes=$((changes + 1))
	say "$*"
}

# owner USER:GROUP PATH: sets ownership when we can (root); group names resolve in the target root.
group_id() {
	if [ -n "$root" ]; then
		[ -f "$root/etc/group" ] || return 1
		awk -F: -v g="$1" '$1 == g { print $3; found = 1 } END { exit !found }' "$root/etc/group"
	else
		entry=$(getent group "$1") || return 1
		echo "$entry" | cut -d: -f3
	fi
}
set_owner() { # OWNER_UID GROUP_NAME_OR_ID PATH
	[ "$is_root" = yes ] || return 0
	want="$1:$2"
	have=$(stat -c '%u:%g' "$3")
	if [ "$have" != "$want" ]; then
		chown "$want" "$3"
		changed "owner of $3 set to $want"
	fi
}
set_mode() { # MODE PATH
	have=$(stat -c '%a' "$2")
	if [ "$have" != "${1#0}" ]; then
		chmod "$1" "$2"
		changed "mode of $2 set to $1"
	fi
}
ensure_dir() { # MODE PATH
	if [ ! -d "$2" ]; then
		mkdir -p "$2"
		changed "created $2"
	fi
	set_mode "$1" "$2"
	set_owner 0 0 "$2"
}
# install_file MODE SRC DEST: replaces DEST atomically (rename) only when its content differs, so
# a running service keeps the inode it executes and an identical file is left alone.
install_file() {
	if [ -f "$3" ] && cmp -s "$2" "$3"; then
		set_mode "$1" "$3"
		set_owner 0 0 "$3"
		return 0
	fi
	tmp="$3.install.$$"
	cp "$2" "$tmp"
	chmod "$1" "$tmp"
	[ "$is_root" = no ] || chown 0:0 "$tmp"
	mv -f "$tmp" "$3"
	changed "installed $3"
}

# 1. The accounts: a system user and group, no login shell, no home folder.
gid=""
if [ "$make_user" = yes ]; then
	if [ -n "$root" ]; then
		mkdir -p "$root/etc"
		for f in passwd group shadow gshadow; do
			if [ ! -f "$root/etc/$f" ]; then
				: >"$root/etc/$f"
				case $f in *shadow) chmod 0600 "$root/etc/$f" ;; *) chmod 0644 "$root/etc/$f" ;; esac
				changed "created $root/etc/$f"
			fi
		done
		set -- --prefix "$root"
	else
		set --
	fi
	if ! group_id docverify >/dev/null 2>&1; then
		groupadd "$@" --system docverify
		changed "created group docverify"
	fi
	if [ -n "$root" ]; then
		has_user=$(awk -F: '$1 == "docverify" { print "yes" }' "$root/etc/passwd")
	else
		has_user=$(getent passwd docverify >/dev/null && echo yes || true)
	fi
	if [ "$has_user" != yes ]; then
		nologin=/usr/sbin/nologin
		[ -x "$nologin" ] || nologin=/sbin/nologin
		useradd "$@" --system --gid docverify --no-create-home --home-dir /nonexistent --shell "$nologin" docverify
		changed "created user docverify"
	fi
	gid=$(group_id docverify)
else
	gid=$(group_id docverify 2>/dev/null || true)
	[ -n "$gid" ] || say "no docverify group: $root/etc/docverify/docverify.env stays in the group root"
fi
[ -n "$gid" ] || gid=0

# 2. The executable.
ensure_dir 0755 "$root/usr/local/bin"
install_file 0755 "$binary" "$root/usr/local/bin/docverify"

# 3. Settings and credentials.
ensure_dir 0755 "$root/etc/docverify"
env_file=$root/etc/docverify/docverify.env
if [ ! -f "$env_file" ]; then
	tmp="$env_file.install.$$"
	(
		umask 077
		cat >"$tmp" <<'EOF'
# docverify settings, read by systemd (EnvironmentFile=) when the service starts. Every
# setting is commented out at its default; uncomment and change what you need, then
# `systemctl restart docverify`. A misspelt DOCVERIFY_* name stops startup, naming it.
# The full table is in the README (section Settings).

# Listen address and port. Behind a reverse proxy keep the loopback default.
#DOCVERIFY_HOST=127.0.0.1
#DOCVERIFY_PORT=8080
# Base of the verify links handed out (default: http(s)://HOST:PORT as bound).
#DOCVERIFY_PUBLIC_URL=https://verify.example.org
# Whom integrators ask about this service (an email address or a URL), in the API document at /docs.
#DOCVERIFY_CONTACT=api-support@example.org
# Database and local files; the unit sets /var/lib/docverify (StateDirectory=).
#DOCVERIFY_DATA_DIR=/var/lib/docverify
# Under systemd the master key is the credential master-key (/etc/docverify/credentials/master-key).
#DOCVERIFY_MASTER_KEY_FILE=

# Ledger: local (on this machine, nothing public), testnet, previewnet or mainnet. Public
# networks need an operator account, and its key as the credential ledger-operator-key:
# put it (hex DER, mode 0600 root) at /etc/docverify/credentials/ledger-operator-key and
# run install.sh again, which adds the LoadCredential= drop-in.
#DOCVERIFY_LEDGER_NETWORK=local
#DOCVERIFY_LEDGER_OPERATOR_ID=0.0.12345
#DOCVERIFY_LEDGER_OPERATOR_KEY_FILE=
#DOCVERIFY_LOCAL_LEDGER_URL=
#DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS=3000
# The embedded local ledger's ports (default: those it remembers, else free ones).
#DOCVERIFY_LOCAL_LEDGER_GRPC_PORT=
#DOCVERIFY_LOCAL_LEDGER_MIRROR_PORT=
#DOCVERIFY_LOCAL_LEDGER_SECOND_MIRROR_PORT=
#DOCVERIFY_ANCHOR_VALID_SECONDS=180

# Batches: the records and revocations of this many milliseconds become one ledger message (0: each
# its own message), at most this many in one (docs/anchoring.md, Batches).
#DOCVERIFY_BATCH_WINDOW_MS=250
#DOCVERIFY_BATCH_MAX=1024

# Requests a minute: per client IP (and per key of an unvalidated organisation), per key and
# per organisation of a validated organisation.
#DOCVERIFY_RATE_LIMIT_ANONYMOUS=60
#DOCVERIFY_RATE_LIMIT_KEY=600
#DOCVERIFY_RATE_LIMIT_ORG=1200
# Reverse proxies whose X-Forwarded-For is believed, as CIDRs.
#DOCVERIFY_TRUSTED_PROXIES=127.0.0.1/32

# Serve HTTPS directly (both or neither). The files must be readable by the user docverify.
#DOCVERIFY_TLS_CERT_FILE=/etc/docverify/tls/cert.pem
#DOCVERIFY_TLS_KEY_FILE=/etc/docverify/tls/key.pem

#DOCVERIFY_METRICS_ALLOW=127.0.0.1/32,::1/128
#DOCVERIFY_LOG_LEVEL=info
# Days the verification log keeps a row (0 keeps every row).
#DOCVERIFY_LOG_RETENTION_DAYS=400
# Mirror nodes a receipt suggests to its verifiers, comma-separated (default: the network's
# public mirror node). Name two independent ones: a verifier needs two that agree.
#DOCVERIFY_MIRROR_NODES=https://mainnet-public.mirrornode.hedera.com
# PostgreSQL shared by several nodes (docs/operations.md, "Several nodes"). Unset: the embedded
# SQLite in DOCVERIFY_DATA_DIR. No password here: put it in /etc/docverify/credentials/database-password
# (mode 0600 root) and run install.sh again; it is handed over as the credential database-password.
#DOCVERIFY_DATABASE_URL=postgres://docverify@db.internal/docverify?sslmode=verify-full
# The database password's file, if not the credential database-password.
#DOCVERIFY_DATABASE_PASSWORD_FILE=
# This node's name in status and serve's start line (default: the host name).
#DOCVERIFY_NODE_NAME=
# Several nodes: how long a leader the ledger does not answer keeps the lead before a node that reaches it takes over (seconds, 5-3600).
#DOCVERIFY_LEDGER_STEP_DOWN_SECONDS=30
EOF
	)
	chmod 0640 "$tmp"
	[ "$is_root" = no ] || chown "0:$gid" "$tmp"
	mv "$tmp" "$env_file"
	changed "created $env_file"
else
	set_mode 0640 "$env_file"
	set_owner 0 "$gid" "$env_file"
fi

cred_dir=$root/etc/docverify/credentials
ensure_dir 0700 "$cred_dir"
master_key=$cred_dir/master-key
if [ ! -e "$master_key" ]; then
	tmp="$master_key.install.$$"
	(
		umask 077
		key=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
		[ ${#key} -eq 64 ] || die "could not read 32 random bytes from /dev/urandom"
		printf '%s\n' "$key" >"$tmp"
	)
	chmod 0600 "$tmp"
	# link, unlike mv, never replaces a key that appeared meanwhile
	if ln "$tmp" "$master_key" 2>/dev/null; then
		changed "created $master_key (back it up apart from the data: without it no private key can be opened)"
	fi
	rm -f "$tmp"
fi
set_mode 0600 "$master_key"
set_owner 0 0 "$master_key"

# 4. The unit, and a drop-in for each optional credential that exists.
ensure_dir 0755 "$root/etc/systemd/system"
unit_changes=$changes
install_file 0644 "$unit_src" "$root/etc/systemd/system/docverify.service"
dropin_dir=$root/etc/systemd/system/docverify.service.d
# A credential the unit loads only while its file exists (LoadCredential= with a missing file
# fails the unit at start): the ledger operator key (public networks), the database password
# (several nodes on PostgreSQL).
optional_credential() {
	dropin=$dropin_dir/$1.conf
	if [ -e "$cred_dir/$1" ]; then
		set_mode 0600 "$cred_dir/$1"
		set_owner 0 0 "$cred_dir/$1"
		ensure_dir 0755 "$dropin_dir"
		tmp_src="${TMPDIR:-/tmp}/docverify-dropin.$$"
		printf '%s\n' "# Written by scripts/install.sh because $cred_dir/$1 exists." \
			"[Service]" "LoadCredential=$1:/etc/docverify/credentials/$1" >"$tmp_src"
		install_file 0644 "$tmp_src" "$dropin"
		rm -f "$tmp_src"
	elif [ -e "$dropin" ]; then
		rm -f "$dropin"
		changed "removed $dropin (no $2)"
	fi
}
optional_credential ledger-operator-key "ledger operator key"
optional_credential database-password "database password"
unit_changed=no
[ "$changes" -eq "$unit_changes" ] || unit_changed=yes

# 5. Documentation, where the unit's Documentation= points.
ensure_dir 0755 "$root/usr/local/share/doc/docverify"
install_file 0644 "$repo/README.md" "$root/usr/local/share/doc/docverify/README.md"
install_file 0644 "$repo/docs/operations.md" "$root/usr/local/share/doc/docverify/operations.md"

# 6. systemd: only on this machine, never for a staging root.
if [ -z "$root" ]; then
	if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
		if [ "$unit_changed" = yes ]; then
			systemctl daemon-reload
			say "systemctl daemon-reload"
		fi
		if [ "$enable" = yes ]; then
			systemctl enable --now docverify.service
			say "enabled and started docverify.service"
		fi
	else
		[ "$enable" = no ] || die "systemd is not running here: cannot --enable"
		say "systemd is not running here: skipped daemon-reload"
	fi
fi

if [ "$changes" -eq 0 ]; then
	say "nothing to change"
else
	say "$changes change(s)"
fi
if [ "$enable" = no ] && [ -z "$root" ]; then
	say "start with: systemctl enable --now docverify   (after an upgrade: systemctl restart docverify)"
fi
