#!/usr/bin/env bash
# Runs a command of an unpacked image (umoci unpack) the way the rendered Deployment's pod runs its
# container, without a container engine: own mount and PID namespaces (the command is PID 1), the image
# root filesystem mounted read-only, /tmp a tmpfs (the install's emptyDir), the ServiceAccount files
# read-only at /var/run/secrets/kubernetes.io/serviceaccount, /proc and the usual /dev nodes, then as
# <uid>:<gid> with no supplementary groups, no capabilities and no_new_privs. The network is the
# host's (the test's API server listens on loopback). Needs root (unshare, mount, chroot).
#
#   scripts/image/sandbox.sh <rootfs> <serviceaccount dir> <uid>:<gid> <workdir> <tmp size> -- \
#     [NAME=value ...] <command> [args ...]
#
# The environment is only the NAME=value pairs given (the image's Env and the pod's). The command is
# looked up in PATH inside the image. Exits with the command's status.
set -euo pipefail
fail() {
  echo "sandbox: $*" >&2
  exit 1
}

if [ "${1:-}" != --inner ]; then
  [ "$(id -u)" = 0 ] || fail "needs root (mount and PID namespaces, chroot)"
  if [ $# -lt 7 ] || [ "$6" != -- ]; then fail "usage: sandbox.sh <rootfs> <serviceaccount dir> <uid>:<gid> <workdir> <tmp size> -- [NAME=value ...] <command> [args ...]"; fi
  # The outer unshare stays on the host and exits with the command's status; --kill-child stops the
  # command should this script be killed.
  exec unshare --mount --pid --fork --kill-child --propagation private -- "$0" --inner "$@"
fi
shift
rootfs=$1 secrets=$2 ids=$3 workdir=$4 tmpsize=$5
shift 6
[ -d "$rootfs/usr" ] || fail "$rootfs is not an unpacked image root filesystem"
uid=${ids%%:*} gid=${ids##*:}

# The mount points a container runtime would create (the unpacked copy is ours to change before it
# goes read-only).
mkdir -p "$rootfs/proc" "$rootfs/dev" "$rootfs/tmp" "$rootfs/var/run/secrets/kubernetes.io/serviceaccount"
mount --bind "$rootfs" "$rootfs"
mount -t proc -o nosuid,nodev,noexec proc "$rootfs/proc"
mount -t tmpfs -o "nosuid,nodev,mode=1777,size=$tmpsize" tmpfs "$rootfs/tmp"
mount -t tmpfs -o nosuid,noexec,mode=0755,size=64k tmpfs "$rootfs/dev"
for node in null zero full random urandom tty; do
  touch "$rootfs/dev/$node"
  mount --bind "/dev/$node" "$rootfs/dev/$node"
done
mkdir "$rootfs/dev/shm" "$rootfs/dev/pts"
mount -t tmpfs -o nosuid,nodev,noexec,mode=1777,size=64m shm "$rootfs/dev/shm"
ln -s /proc/self/fd "$rootfs/dev/fd"
ln -s /proc/self/fd/0 "$rootfs/dev/stdin"
ln -s /proc/self/fd/1 "$rootfs/dev/stdout"
ln -s /proc/self/fd/2 "$rootfs/dev/stderr"
mount --bind "$secrets" "$rootfs/var/run/secrets/kubernetes.io/serviceaccount"
mount -o remount,bind,ro,nosuid,nodev "$rootfs/var/run/secrets/kubernetes.io/serviceaccount"
mount -o remount,bind,ro,nosuid,nodev,noexec "$rootfs/dev"
# readOnlyRootFilesystem: true
mount -o remount,bind,ro,nosuid,nodev "$rootfs"

# Privileges go in two steps, because chroot needs a capability the command must not have: setpriv
# clears the inheritable and ambient sets, sets no_new_privs and leaves the bounding set only what
# unshare needs to chroot and change user; unshare chroots, drops the groups and becomes <uid>:<gid>,
# which clears the permitted and effective sets, and execs the command (PID 1 of this namespace).
envs=()
while [ $# -gt 0 ] && [[ $1 =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do
  envs+=("$1")
  shift
done
[ $# -gt 0 ] || fail "no command given"
exec /usr/bin/env -i "${envs[@]}" \
  /usr/bin/setpriv --no-new-privs --inh-caps=-all --ambient-caps=-all --bounding-set=-all,+sys_chroot,+setuid,+setgid -- \
  /usr/bin/unshare --root="$rootfs" --wd="$workdir" --setgid="$gid" --setuid="$uid" -- "$@"
