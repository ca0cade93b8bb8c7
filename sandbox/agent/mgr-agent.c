/*
 * mgr-agent: the command agent inside the docdex sandbox microVM.
 *
 * It is PID 1 of the guest (the init script execs it) and serves one virtio-serial port. The host runner
 * sends framed requests; the agent runs commands, streams their output back and reports how they ended.
 * A shell loop cannot keep stdout and stderr apart, carry arbitrary bytes or run several commands at once,
 * which is why this is a small static C program (built with `cc -static -O2`, no libraries).
 *
 * Wire format (both directions, little endian), documented in sandbox/README.md and src/core/sandbox/protocol.ts:
 *   u32 payload_length | u8 type | u32 request_id | payload
 * Strings inside payloads are u32 length + bytes (no terminator, any byte except NUL where the kernel forbids it).
 *
 * Host -> guest
 *   0x01 EXEC    u32 timeout_ms (0 = none) | u32 argc | u32 envc | str cwd | str argv[argc] | str env[envc]
 *   0x02 SIGNAL  u32 signal number, delivered to the command's process group
 *   0x03 ATTEST  (empty) -> ATTEST_RESULT with live facts as JSON
 * Guest -> host
 *   0x40 HELLO   (id 0) agent version text, sent once the agent is ready
 *   0x41 STARTED u32 pid
 *   0x42 STDOUT  bytes
 *   0x43 STDERR  bytes
 *   0x44 EXIT    u8 kind (0 exited, 1 killed by signal, 2 timed out, 3 could not start) | i32 value | message
 *   0x45 ATTEST_RESULT  JSON text
 *   0x46 ERROR   message; the request was rejected and produces nothing else
 *
 * Usage: mgr-agent --port DEV [--root DIR] [--image-dir DIR] [--user UID:GID]
 *   --root      the prepared guest root; the agent moves it over / and chroots there (switch_root without
 *               deleting the initramfs, so the agent binary needs no copy inside the image)
 *   --image-dir the read-only image mount, kept open so attestation reads the image reference from the
 *               image itself rather than from the writable overlay a guest root user could edit
 *   --user      the exec user every command runs as (SANDBOX_EXEC_USER)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define AGENT_VERSION "mgr-agent/1"
/* Larger frames are a protocol error: no legitimate request (command text, env) comes near this. */
#define MAX_FRAME (4u << 20)
#define MAX_CMDS 128
#define READ_CHUNK 65536
/* After the main process exits, keep relaying output that is already in flight; a background job that
 * holds the pipes open must not keep the call hanging, so give up on the pipes after this quiet period. */
#define DRAIN_MS 200
/* A timed-out command gets SIGTERM first and SIGKILL this long after. */
#define KILL_GRACE_MS 2000
#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

enum {
  T_EXEC = 0x01, T_SIGNAL = 0x02, T_ATTEST = 0x03,
  T_HELLO = 0x40, T_STARTED = 0x41, T_STDOUT = 0x42, T_STDERR = 0x43, T_EXIT = 0x44,
  T_ATTEST_RESULT = 0x45, T_ERROR = 0x46,
};
enum { END_EXITED = 0, END_SIGNALED = 1, END_TIMEOUT = 2, END_SPAWN = 3 };

struct cmd {
  int used;
  uint32_t id;
  pid_t pid;
  int out_fd, err_fd;
  int exited, status, timed_out;
  int64_t deadline, kill_at, drain_until; /* monotonic ms, 0 = unset */
};

static int port_fd = -1;
static int image_dir_fd = -1;
static uid_t exec_uid = 0;
static gid_t exec_gid = 0;
static int sigchld_pipe[2] = {-1, -1};
static struct cmd cmds[MAX_CMDS];

static void logmsg(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("mgr-agent: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void put_u32(unsigned char *p, uint32_t v) {
  p[0] = v & 0xff; p[1] = (v >> 8) & 0xff; p[2] = (v >> 16) & 0xff; p[3] = (v >> 24) & 0xff;
}
static uint32_t get_u32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int write_all(int fd, const void *buf, size_t len) {
  const char *p = buf;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) { struct pollfd pfd = {fd, POLLOUT, 0}; poll(&pfd, 1, 100); continue; }
      return -1;
    }
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

/* The port is the only way out of the guest; if writing to it fails the host is gone and there is nothing
 * useful left to do, so the agent dies, the kernel panics (panic=-1) and QEMU exits (-no-reboot). */
static void send_frame2(uint8_t type, uint32_t id, const void *a, size_t alen, const void *b, size_t blen) {
  unsigned char hdr[9];
  put_u32(hdr, (uint32_t)(alen + blen));
  hdr[4] = type;
  put_u32(hdr + 5, id);
  if (write_all(port_fd, hdr, sizeof hdr) < 0 || (alen && write_all(port_fd, a, alen) < 0) ||
      (blen && write_all(port_fd, b, blen) < 0)) {
    logmsg("port write failed: %s", strerror(errno));
    _exit(70);
  }
}
static void send_frame(uint8_t type, uint32_t id, const void *p, size_t len) { send_frame2(type, id, p, len, NULL, 0); }

static void send_error(uint32_t id, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  send_frame(T_ERROR, id, msg, strlen(msg));
}

static void send_exit(uint32_t id, uint8_t kind, int32_t value, const char *msg) {
  unsigned char p[5];
  p[0] = kind;
  put_u32(p + 1, (uint32_t)value);
  send_frame2(T_EXIT, id, p, sizeof p, msg, msg ? strlen(msg) : 0);
}

/* ---- growable byte buffer, used for JSON ---- */
struct buf { char *p; size_t len, cap; };
static void buf_add(struct buf *b, const void *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 1024;
    while (b->len + n + 1 > cap) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) { logmsg("out of memory"); _exit(71); }
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = 0;
}
static void buf_str(struct buf *b, const char *s) { buf_add(b, s, strlen(s)); }
static void buf_fmt(struct buf *b, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n > 0) buf_add(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}
/* JSON string; bytes >= 0x80 become \u00XX (Latin-1), so any byte sequence yields valid JSON and the host
 * can recover the exact bytes. */
static void buf_json(struct buf *b, const char *s, size_t n) {
  buf_add(b, "\"", 1);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') { char e[2] = {'\\', (char)c}; buf_add(b, e, 2); }
    else if (c < 0x20 || c >= 0x7f) buf_fmt(b, "\\u%04x", c);
    else buf_add(b, &s[i], 1);
  }
  buf_add(b, "\"", 1);
}
static void buf_json_cstr(struct buf *b, const char *s) { buf_json(b, s, strlen(s)); }

/* Reads a whole small file (proc/sys files report size 0, so read until EOF). */
static int read_file_at(int dirfd, const char *path, struct buf *out) {
  int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char tmp[4096];
  for (;;) {
    ssize_t n = read(fd, tmp, sizeof tmp);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buf_add(out, tmp, (size_t)n);
  }
  close(fd);
  return 0;
}
static void trim_newline(struct buf *b) {
  while (b->len > 0 && (b->p[b->len - 1] == '\n' || b->p[b->len - 1] == '\r')) b->p[--b->len] = 0;
}

/* ---- attestation ---- */

/* Fork a child that drops to the exec user exactly as a command would and reports what it became, so the
 * attested user is what commands really get, not what we were told. */
static void probe_exec_user(long *uid, long *gid) {
  int p[2];
  *uid = -1;
  *gid = -1;
  if (pipe2(p, O_CLOEXEC) < 0) return;
  pid_t pid = fork();
  if (pid == 0) {
    long v[2] = {-1, -1};
    if (setgroups(0, NULL) == 0 && setgid(exec_gid) == 0 && setuid(exec_uid) == 0) {
      v[0] = (long)getuid();
      v[1] = (long)getgid();
    }
    if (write(p[1], v, sizeof v) < 0) _exit(1);
    _exit(0);
  }
  close(p[1]);
  if (pid > 0) {
    long v[2];
    if (read(p[0], v, sizeof v) == (ssize_t)sizeof v) { *uid = v[0]; *gid = v[1]; }
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
  }
  close(p[0]);
}

static unsigned long long iomem_ram_kib(void) {
  struct buf b = {0};
  unsigned long long total = 0;
  if (read_file_at(AT_FDCWD, "/proc/iomem", &b) < 0) return 0;
  char *save = NULL;
  for (char *line = b.p ? strtok_r(b.p, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
    if (line[0] == ' ') continue; /* nested resources are inside a top-level range */
    unsigned long long lo, hi;
    char name[64];
    if (sscanf(line, "%llx-%llx : %63[^\n]", &lo, &hi, name) == 3 && strcmp(name, "System RAM") == 0)
      total += hi - lo + 1;
  }
  free(b.p);
  return total / 1024;
}

static void handle_attest(uint32_t id) {
  struct buf j = {0}, t = {0};
  struct utsname u;
  uname(&u);
  buf_str(&j, "{\"agent\":");
  buf_json_cstr(&j, AGENT_VERSION);
  buf_str(&j, ",\"kernel_release\":"); buf_json_cstr(&j, u.release);
  buf_str(&j, ",\"kernel_version\":"); buf_json_cstr(&j, u.version);
  buf_str(&j, ",\"machine\":"); buf_json_cstr(&j, u.machine);
  buf_str(&j, ",\"hostname\":"); buf_json_cstr(&j, u.nodename);

  t.len = 0;
  read_file_at(AT_FDCWD, "/proc/sys/kernel/random/boot_id", &t);
  trim_newline(&t);
  buf_str(&j, ",\"boot_id\":"); buf_json(&j, t.p ? t.p : "", t.len);

  buf_fmt(&j, ",\"cpus\":%ld", sysconf(_SC_NPROCESSORS_ONLN));
  unsigned long long memtotal = 0;
  t.len = 0;
  if (read_file_at(AT_FDCWD, "/proc/meminfo", &t) == 0 && t.p) {
    char *m = strstr(t.p, "MemTotal:");
    if (m) memtotal = strtoull(m + 9, NULL, 10);
  }
  buf_fmt(&j, ",\"mem_total_kib\":%llu,\"mem_ram_kib\":%llu", memtotal, iomem_ram_kib());

  long uid, gid;
  probe_exec_user(&uid, &gid);
  buf_fmt(&j, ",\"exec_uid\":%ld,\"exec_gid\":%ld", uid, gid);

  t.len = 0;
  if (image_dir_fd >= 0 && read_file_at(image_dir_fd, "etc/mgr-image-ref", &t) == 0) {
    trim_newline(&t);
    buf_str(&j, ",\"image_ref\":"); buf_json(&j, t.p ? t.p : "", t.len);
  } else {
    buf_str(&j, ",\"image_ref\":null");
  }

  t.len = 0;
  read_file_at(AT_FDCWD, "/proc/cmdline", &t);
  trim_newline(&t);
  buf_str(&j, ",\"cmdline\":"); buf_json(&j, t.p ? t.p : "", t.len);

  /* Raw /proc/self/mounts lines: the host decodes the octal escapes, so odd paths survive intact. */
  t.len = 0;
  read_file_at(AT_FDCWD, "/proc/self/mounts", &t);
  buf_str(&j, ",\"mounts\":[");
  int first = 1;
  size_t start = 0;
  for (size_t i = 0; t.p && i < t.len; i++) {
    if (t.p[i] != '\n') continue;
    if (i > start) {
      if (!first) buf_add(&j, ",", 1);
      buf_json(&j, t.p + start, i - start);
      first = 0;
    }
    start = i + 1;
  }
  buf_str(&j, "]");

  buf_str(&j, ",\"interfaces\":[");
  DIR *d = opendir("/sys/class/net");
  first = 1;
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (e->d_name[0] == '.') continue;
      if (!first) buf_add(&j, ",", 1);
      buf_json_cstr(&j, e->d_name);
      first = 0;
    }
    closedir(d);
  }
  buf_str(&j, "]");

  struct timespec up;
  clock_gettime(CLOCK_BOOTTIME, &up);
  buf_fmt(&j, ",\"uptime_ms\":%lld", (long long)up.tv_sec * 1000 + up.tv_nsec / 1000000);
  int running = 0;
  for (int i = 0; i < MAX_CMDS; i++) running += cmds[i].used;
  buf_fmt(&j, ",\"running\":%d}", running);

  send_frame(T_ATTEST_RESULT, id, j.p, j.len);
  free(j.p);
  free(t.p);
}

/* ---- commands ---- */

static struct cmd *find_cmd(uint32_t id) {
  for (int i = 0; i < MAX_CMDS; i++)
    if (cmds[i].used && cmds[i].id == id) return &cmds[i];
  return NULL;
}

struct reader { const unsigned char *p; size_t left; int bad; };
static uint32_t rd_u32(struct reader *r) {
  if (r->left < 4) { r->bad = 1; return 0; }
  uint32_t v = get_u32(r->p);
  r->p += 4;
  r->left -= 4;
  return v;
}
/* Returns a freshly allocated NUL-terminated copy; a NUL inside the string cannot cross execve, so it is
 * rejected rather than silently truncated. */
static char *rd_str(struct reader *r) {
  uint32_t n = rd_u32(r);
  if (r->bad || n > r->left || memchr(r->p, 0, n)) { r->bad = 1; return NULL; }
  char *s = malloc((size_t)n + 1);
  if (!s) { r->bad = 1; return NULL; }
  memcpy(s, r->p, n);
  s[n] = 0;
  r->p += n;
  r->left -= n;
  return s;
}

static void free_strv(char **v) {
  if (!v) return;
  for (char **p = v; *p; p++) free(*p);
  free(v);
}

/* execvpe() searches the agent's own PATH; the command's PATH is the one that must count. */
static void exec_search(char **argv, char **envp) {
  const char *path = NULL;
  for (char **e = envp; *e; e++)
    if (strncmp(*e, "PATH=", 5) == 0) { path = *e + 5; break; }
  if (!path) path = DEFAULT_PATH;
  if (strchr(argv[0], '/')) { execve(argv[0], argv, envp); return; }
  int saw_eacces = 0;
  char full[4096];
  const char *p = path;
  for (;;) {
    const char *colon = strchr(p, ':');
    size_t dl = colon ? (size_t)(colon - p) : strlen(p);
    if (dl == 0) snprintf(full, sizeof full, "%s", argv[0]);
    else snprintf(full, sizeof full, "%.*s/%s", (int)dl, p, argv[0]);
    execve(full, argv, envp);
    if (errno == EACCES) saw_eacces = 1;
    if (!colon) break;
    p = colon + 1;
  }
  if (saw_eacces) errno = EACCES;
}

static int has_env(char **envp, const char *name) {
  size_t n = strlen(name);
  for (char **e = envp; *e; e++)
    if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') return 1;
  return 0;
}

static void handle_exec(uint32_t id, const unsigned char *payload, size_t len) {
  if (find_cmd(id)) { send_error(id, "request id %u is already running", id); return; }
  struct cmd *c = NULL;
  for (int i = 0; i < MAX_CMDS; i++) if (!cmds[i].used) { c = &cmds[i]; break; }
  if (!c) { send_error(id, "too many concurrent commands (limit %d)", MAX_CMDS); return; }

  struct reader r = {payload, len, 0};
  uint32_t timeout_ms = rd_u32(&r), argc = rd_u32(&r), envc = rd_u32(&r);
  if (r.bad || argc == 0 || argc > 65536 || envc > 65536) { send_error(id, "malformed EXEC request"); return; }
  char *cwd = rd_str(&r);
  char **argv = calloc((size_t)argc + 1, sizeof *argv);
  char **envp = calloc((size_t)envc + 3, sizeof *envp);
  if (!argv || !envp) r.bad = 1;
  for (uint32_t i = 0; !r.bad && i < argc; i++) argv[i] = rd_str(&r);
  for (uint32_t i = 0; !r.bad && i < envc; i++) {
    envp[i] = rd_str(&r);
    if (envp[i] && !strchr(envp[i], '=')) r.bad = 1;
  }
  if (r.bad || !cwd) {
    send_error(id, "malformed EXEC request (strings must not contain NUL; env entries must be NAME=VALUE)");
    free(cwd); free_strv(argv); free_strv(envp);
    return;
  }
  /* The guest environment starts empty; only a PATH and HOME are supplied when the host sent none. */
  size_t ne = envc;
  if (!has_env(envp, "PATH")) envp[ne++] = strdup("PATH=" DEFAULT_PATH);
  if (!has_env(envp, "HOME")) envp[ne++] = strdup(exec_uid == 0 ? "HOME=/root" : "HOME=/tmp");

  int out[2], err[2], status_pipe[2];
  if (pipe2(out, O_CLOEXEC) < 0) goto spawn_fail;
  if (pipe2(err, O_CLOEXEC) < 0) { close(out[0]); close(out[1]); goto spawn_fail; }
  if (pipe2(status_pipe, O_CLOEXEC) < 0) { close(out[0]); close(out[1]); close(err[0]); close(err[1]); goto spawn_fail; }

  pid_t pid = fork();
  if (pid == 0) {
    int stage = 0;
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int s = 1; s < NSIG; s++) signal(s, SIG_DFL);
    setsid(); /* own process group, so a timeout or cancel reaches every process the command started */
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0) { stage = 1; goto child_fail; }
    if (chdir(cwd) < 0) { stage = 2; goto child_fail; }
    if (setgroups(0, NULL) < 0 || setgid(exec_gid) < 0 || setuid(exec_uid) < 0) { stage = 3; goto child_fail; }
    exec_search(argv, envp);
    stage = 4;
  child_fail: {
      int v[2] = {stage, errno};
      if (write(status_pipe[1], v, sizeof v) < 0) _exit(126);
      _exit(127);
    }
  }
  int fork_errno = errno;
  close(out[1]);
  close(err[1]);
  close(status_pipe[1]);
  if (pid < 0) {
    close(out[0]); close(err[0]); close(status_pipe[0]);
    errno = fork_errno;
    goto spawn_fail;
  }
  int v[2];
  ssize_t n;
  do n = read(status_pipe[0], v, sizeof v); while (n < 0 && errno == EINTR);
  close(status_pipe[0]);
  if (n == (ssize_t)sizeof v) {
    static const char *stages[] = {"", "set up stdio", "enter the working directory", "switch to the exec user", "execute"};
    char msg[4608];
    const char *what = v[0] >= 1 && v[0] <= 4 ? stages[v[0]] : "start";
    if (v[0] == 2) snprintf(msg, sizeof msg, "cannot %s %s: %s", what, cwd, strerror(v[1]));
    else if (v[0] == 4) snprintf(msg, sizeof msg, "cannot %s %s: %s", what, argv[0], strerror(v[1]));
    else snprintf(msg, sizeof msg, "cannot %s: %s", what, strerror(v[1]));
    close(out[0]); close(err[0]);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
    send_exit(id, END_SPAWN, v[1], msg);
    goto done;
  }
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  fcntl(err[0], F_SETFL, O_NONBLOCK);
  memset(c, 0, sizeof *c);
  c->used = 1;
  c->id = id;
  c->pid = pid;
  c->out_fd = out[0];
  c->err_fd = err[0];
  c->deadline = timeout_ms ? now_ms() + timeout_ms : 0;
  {
    unsigned char p[4];
    put_u32(p, (uint32_t)pid);
    send_frame(T_STARTED, id, p, 4);
  }
  goto done;

spawn_fail: {
    char msg[256];
    snprintf(msg, sizeof msg, "cannot start command: %s", strerror(errno));
    send_exit(id, END_SPAWN, errno, msg);
  }
done:
  free(cwd);
  free_strv(argv);
  free_strv(envp);
}

static void handle_signal(uint32_t id, const unsigned char *p, size_t len) {
  struct cmd *c = find_cmd(id);
  if (len < 4) { send_error(id, "malformed SIGNAL request"); return; }
  if (!c || c->exited) return; /* already finished: the EXIT frame is on its way */
  int sig = (int)get_u32(p);
  if (sig <= 0 || sig >= NSIG) { send_error(id, "bad signal %d", sig); return; }
  kill(-c->pid, sig);
}

static void finish_cmd(struct cmd *c) {
  if (c->out_fd >= 0) close(c->out_fd);
  if (c->err_fd >= 0) close(c->err_fd);
  int st = c->status;
  if (c->timed_out) send_exit(c->id, END_TIMEOUT, WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), "command timed out");
  else if (WIFSIGNALED(st)) send_exit(c->id, END_SIGNALED, WTERMSIG(st), NULL);
  else send_exit(c->id, END_EXITED, WEXITSTATUS(st), NULL);
  memset(c, 0, sizeof *c);
}

static void pump(struct cmd *c, int *fd, uint8_t type) {
  static unsigned char chunk[READ_CHUNK];
  ssize_t n = read(*fd, chunk, sizeof chunk);
  if (n > 0) {
    send_frame(type, c->id, chunk, (size_t)n);
    if (c->exited) c->drain_until = now_ms() + DRAIN_MS;
  } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
    close(*fd);
    *fd = -1;
  }
}

static void reap(void) {
  int st;
  pid_t pid;
  while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
    for (int i = 0; i < MAX_CMDS; i++) {
      if (cmds[i].used && cmds[i].pid == pid) {
        cmds[i].exited = 1;
        cmds[i].status = st;
        cmds[i].drain_until = now_ms() + DRAIN_MS;
      }
    }
    /* Anything else is an orphan re-parented to PID 1 (us): reaping it is all there is to do. */
  }
}

static void on_sigchld(int sig) {
  (void)sig;
  int e = errno;
  if (write(sigchld_pipe[1], "x", 1) < 0) {}
  errno = e;
}

/* ---- setup ---- */

static void switch_root(const char *root) {
  if (chdir(root) < 0) { logmsg("chdir %s: %s", root, strerror(errno)); _exit(72); }
  if (mount(".", "/", NULL, MS_MOVE, NULL) < 0) { logmsg("move root: %s", strerror(errno)); _exit(72); }
  if (chroot(".") < 0) { logmsg("chroot: %s", strerror(errno)); _exit(72); }
  if (chdir("/") < 0) _exit(72);
}

static void parse_user(const char *s) {
  char *end;
  unsigned long u = strtoul(s, &end, 10);
  if (*end != ':') { logmsg("bad --user %s", s); _exit(64); }
  unsigned long g = strtoul(end + 1, &end, 10);
  if (*end) { logmsg("bad --user %s", s); _exit(64); }
  exec_uid = (uid_t)u;
  exec_gid = (gid_t)g;
}

int main(int argc, char **argv) {
  const char *port = NULL, *root = NULL, *image_dir = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--port") && i + 1 < argc) port = argv[++i];
    else if (!strcmp(argv[i], "--root") && i + 1 < argc) root = argv[++i];
    else if (!strcmp(argv[i], "--image-dir") && i + 1 < argc) image_dir = argv[++i];
    else if (!strcmp(argv[i], "--user") && i + 1 < argc) parse_user(argv[++i]);
    else if (!strcmp(argv[i], "--version")) { puts(AGENT_VERSION); return 0; }
    else { logmsg("unknown argument %s", argv[i]); return 64; }
  }
  if (!port) { logmsg("--port is required"); return 64; }

  port_fd = open(port, O_RDWR | O_CLOEXEC | O_NOCTTY);
  if (port_fd < 0) { logmsg("open %s: %s", port, strerror(errno)); return 66; }
  if (image_dir) {
    image_dir_fd = open(image_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (image_dir_fd < 0) { logmsg("open %s: %s", image_dir, strerror(errno)); return 66; }
  }
  if (root) switch_root(root);

  if (pipe2(sigchld_pipe, O_CLOEXEC | O_NONBLOCK) < 0) return 71;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigchld;
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigaction(SIGCHLD, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);

  send_frame(T_HELLO, 0, AGENT_VERSION, strlen(AGENT_VERSION));

  unsigned char *in = malloc(MAX_FRAME + 9);
  size_t inlen = 0;
  if (!in) return 71;
  struct pollfd pfds[2 + 2 * MAX_CMDS];
  struct { struct cmd *c; int which; } map[2 * MAX_CMDS];

  for (;;) {
    int64_t now = now_ms(), wake = -1;
    for (int i = 0; i < MAX_CMDS; i++) {
      struct cmd *c = &cmds[i];
      if (!c->used) continue;
      if (!c->exited && c->deadline && now >= c->deadline && !c->timed_out) {
        c->timed_out = 1;
        kill(-c->pid, SIGTERM);
        c->kill_at = now + KILL_GRACE_MS;
      }
      if (!c->exited && c->kill_at && now >= c->kill_at) {
        kill(-c->pid, SIGKILL);
        c->kill_at = 0;
      }
      if (c->exited && ((c->out_fd < 0 && c->err_fd < 0) || now >= c->drain_until)) { finish_cmd(c); continue; }
      int64_t t[3] = {c->timed_out ? 0 : c->deadline, c->kill_at, c->exited ? c->drain_until : 0};
      for (int k = 0; k < 3; k++) if (t[k] && (wake < 0 || t[k] < wake)) wake = t[k];
    }

    int n = 0, m = 0;
    pfds[n++] = (struct pollfd){port_fd, POLLIN, 0};
    pfds[n++] = (struct pollfd){sigchld_pipe[0], POLLIN, 0};
    for (int i = 0; i < MAX_CMDS; i++) {
      struct cmd *c = &cmds[i];
      if (!c->used) continue;
      if (c->out_fd >= 0) { map[m].c = c; map[m].which = 1; m++; pfds[n++] = (struct pollfd){c->out_fd, POLLIN, 0}; }
      if (c->err_fd >= 0) { map[m].c = c; map[m].which = 2; m++; pfds[n++] = (struct pollfd){c->err_fd, POLLIN, 0}; }
    }
    int timeout = wake < 0 ? -1 : (int)(wake > now ? wake - now : 0);
    int r = poll(pfds, (nfds_t)n, timeout);
    if (r < 0) {
      if (errno == EINTR) continue;
      logmsg("poll: %s", strerror(errno));
      return 71;
    }

    if (pfds[1].revents) {
      char drain[64];
      while (read(sigchld_pipe[0], drain, sizeof drain) > 0) {}
      reap();
    }
    for (int k = 0; k < m; k++) {
      if (!pfds[2 + k].revents) continue;
      struct cmd *c = map[k].c;
      if (map[k].which == 1 && c->out_fd >= 0) pump(c, &c->out_fd, T_STDOUT);
      if (map[k].which == 2 && c->err_fd >= 0) pump(c, &c->err_fd, T_STDERR);
    }

    if (pfds[0].revents & POLLIN) {
      ssize_t got = read(port_fd, in + inlen, MAX_FRAME + 9 - inlen);
      if (got < 0 && errno != EAGAIN && errno != EINTR) { logmsg("port read: %s", strerror(errno)); return 70; }
      if (got > 0) inlen += (size_t)got;
      size_t off = 0;
      while (inlen - off >= 9) {
        uint32_t plen = get_u32(in + off);
        if (plen > MAX_FRAME) { logmsg("frame of %u bytes exceeds the limit", plen); return 70; }
        if (inlen - off < 9 + (size_t)plen) break;
        uint8_t type = in[off + 4];
        uint32_t id = get_u32(in + off + 5);
        const unsigned char *p = in + off + 9;
        switch (type) {
          case T_EXEC: handle_exec(id, p, plen); break;
          case T_SIGNAL: handle_signal(id, p, plen); break;
          case T_ATTEST: handle_attest(id); break;
          default: send_error(id, "unknown request type 0x%02x", type);
        }
        off += 9 + (size_t)plen;
      }
      if (off > 0) { memmove(in, in + off, inlen - off); inlen -= off; }
    } else if (pfds[0].revents & (POLLHUP | POLLERR)) {
      /* Host side closed: nobody can receive output any more, so running commands are stopped rather than
       * left behind, and we wait for the host to come back. */
      for (int i = 0; i < MAX_CMDS; i++)
        if (cmds[i].used && !cmds[i].exited) kill(-cmds[i].pid, SIGKILL);
      inlen = 0;
      poll(NULL, 0, 100);
    }
  }
}
