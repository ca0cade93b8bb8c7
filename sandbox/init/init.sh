#!/bin/sh
# Guest init of the docdex sandbox microVM (PID 1 inside the initramfs, run by busybox sh).
# It loads the modules, assembles the guest root and execs the command agent, which stays PID 1.
#
# Kernel command line parameters (written by src/core/sandbox/qemu-args.ts; values percent-encoded):
#   mgr.probe=1          acceleration probe: print MGR-PROBE-OK and power off
#   mgr.roots=A,B        host directories shared as 9p tags mgr0, mgr1, ...; mounted at the same paths
#   mgr.tmpfs_kib=N      size of the /tmp tmpfs (one quarter of memory, clamped to 1-512 MiB, on the host)
#   mgr.user=UID:GID     exec user of every command
#   mgr.hostname=NAME    guest hostname
#   mgr.labels=K=V,...   labels; read back from /proc/cmdline by attestation
# Any failure here ends PID 1, the kernel panics (panic=-1) and QEMU exits (-no-reboot): the host sees a
# dead VM instead of a half-built one.
set -eu
export PATH=/bin

fail() { echo "mgr-init: $*" >&2; exit 1; }

mount -t proc -o nosuid,nodev,noexec proc /proc
mount -t sysfs -o nosuid,nodev,noexec sysfs /sys
mount -t devtmpfs -o nosuid,mode=0755 devtmpfs /dev
# The initramfs has no /dev/console node, so the kernel started us without stdio; attach it now so that
# failures (ours and the agent's) reach the serial console log on the host.
exec </dev/console >/dev/console 2>&1

PROBE=0 ROOTS='' TMPFS_KIB='' EXEC_USER='' GUEST_HOSTNAME=mgr-workspace
for word in $(cat /proc/cmdline); do
  case "$word" in
    mgr.probe=1) PROBE=1 ;;
    mgr.roots=*) ROOTS=${word#mgr.roots=} ;;
    mgr.tmpfs_kib=*) TMPFS_KIB=${word#mgr.tmpfs_kib=} ;;
    mgr.user=*) EXEC_USER=${word#mgr.user=} ;;
    mgr.hostname=*) GUEST_HOSTNAME=${word#mgr.hostname=} ;;
  esac
done

if [ "$PROBE" = 1 ]; then
  echo MGR-PROBE-OK > /dev/console
  poweroff -f
fi

case "$TMPFS_KIB" in ''|*[!0-9]*) fail "mgr.tmpfs_kib missing or not a number" ;; esac
case "$EXEC_USER" in *[0-9]:[0-9]*) ;; *) fail "mgr.user must be UID:GID" ;; esac

# Percent-decoding: paths arrive encoded so spaces and commas survive the command line.
pct_decode() { printf '%b' "$(printf '%s' "$1" | sed 's/%\([0-9A-Fa-f][0-9A-Fa-f]\)/\\x\1/g')"; }

while read -r mod; do
  [ -n "$mod" ] && insmod "/lib/modules/$mod.ko"
done < /lib/modules/load-order

# Drivers probe asynchronously enough that the device nodes can lag the insmod by a moment.
wait_for() { # path
  i=0
  while [ ! -e "$1" ]; do
    i=$((i + 1)); [ "$i" -le 200 ] || fail "$1 did not appear"
    sleep 0.05
  done
}

IMAGE_DEV='' SCRATCH_DEV=''
i=0
while [ -z "$IMAGE_DEV" ] || [ -z "$SCRATCH_DEV" ]; do
  for b in /sys/block/vd*; do
    [ -e "$b/serial" ] || continue
    case "$(cat "$b/serial")" in
      mgr-image) IMAGE_DEV=/dev/${b##*/} ;;
      mgr-scratch) SCRATCH_DEV=/dev/${b##*/} ;;
    esac
  done
  i=$((i + 1)); [ "$i" -le 200 ] || fail "image or scratch disk missing"
  [ -n "$IMAGE_DEV" ] && [ -n "$SCRATCH_DEV" ] || sleep 0.05
done
wait_for "$IMAGE_DEV"
wait_for "$SCRATCH_DEV"

# Ports are announced by the host over the virtio-serial control queue, after the driver has loaded.
PORT='' i=0
while [ -z "$PORT" ]; do
  for p in /sys/class/virtio-ports/*; do
    [ "$(cat "$p/name" 2>/dev/null)" = mgr.agent ] && PORT=/dev/${p##*/}
  done
  i=$((i + 1)); [ "$i" -le 200 ] || fail "agent port mgr.agent not found"
  [ -n "$PORT" ] || sleep 0.05
done
wait_for "$PORT"

# The image is read-only; the VM's own writes to / land on a per-VM scratch disk that dies with the VM.
mkdir -p /mnt/image /mnt/scratch /newroot
mount -t ext4 -o ro,noload "$IMAGE_DEV" /mnt/image
# noinit_itable: the scratch filesystem is made with lazy inode tables; zeroing them in the background
# would write ~128 MiB per VM for nothing (the disk is new and dies with the VM) and cost CPU under TCG.
mount -t ext4 -o rw,nodev,noinit_itable "$SCRATCH_DEV" /mnt/scratch
mkdir -p /mnt/scratch/upper /mnt/scratch/work
mount -t overlay -o "lowerdir=/mnt/image,upperdir=/mnt/scratch/upper,workdir=/mnt/scratch/work" overlay /newroot

mkdir -p /newroot/proc /newroot/sys /newroot/dev /newroot/tmp
mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
mount --move /dev /newroot/dev
mkdir -p /newroot/dev/pts
mount -t devpts -o nosuid,noexec,newinstance,ptmxmode=0666 devpts /newroot/dev/pts
# The only tmpfs in the guest; attestation checks its size and options.
mount -t tmpfs -o "size=${TMPFS_KIB}k,mode=1777,nosuid,nodev" tmpfs /newroot/tmp

n=0
OLDIFS=$IFS
IFS=,
for enc in $ROOTS; do
  IFS=$OLDIFS
  path=$(pct_decode "$enc")
  case "$path" in /*) ;; *) fail "root $path is not absolute" ;; esac
  mkdir -p "/newroot$path"
  # cache=none: a repository cloned on the host must be visible in the guest at once. msize: the largest
  # message the virtio transport takes (QEMU 7.2), so the kernel does not have to cut it down.
  mount -t 9p -o "trans=virtio,version=9p2000.L,msize=512000,cache=none,nosuid,nodev" "mgr$n" "/newroot$path"
  n=$((n + 1))
  IFS=,
done
IFS=$OLDIFS

hostname "$(pct_decode "$GUEST_HOSTNAME")"
# No network devices exist (QEMU gets none); loopback is the guest's own, so "localhost" is the guest.
ip link set lo up


exec /bin/mgr-agent --port "/newroot$PORT" --root /newroot --image-dir /mnt/image --user "$EXEC_USER"
