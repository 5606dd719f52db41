/* tests/capsule/fixture.c: a static stand-in interpreter for capsule tests.
 *
 * It honours the docs/design.md §2 command line (`--version`, `check FILE`,
 * `run ... --args-file args.json FILE`) and does what the first word of the
 * staged source says, so one binary can exercise every outcome of a
 * capsule run: echo, noop, nonjson, fail, spin, sleep, flood, big,
 * syscall NAME, forkbomb, membomb, posture, rootwrite, execcache. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0) return NULL;
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);
	for (;;) {
		if (n + 1 >= cap) b = realloc(b, cap *= 2);
		ssize_t r = read(fd, b + n, cap - n - 1);
		if (r <= 0) break;
		n += (size_t)r;
	}
	close(fd);
	b[n] = 0;
	if (len) *len = n;
	return b;
}

static int do_syscall(const char *name)
{
	long rc = 0;
	if (strcmp(name, "keyctl") == 0) rc = syscall(SYS_keyctl, 0, 0, 0, 0, 0);
	else if (strcmp(name, "unshare") == 0) rc = unshare(CLONE_NEWUSER);
	else if (strcmp(name, "socket") == 0) rc = socket(AF_INET, SOCK_STREAM, 0);
	else if (strcmp(name, "mount") == 0) rc = mount("none", "/", "tmpfs", 0, NULL);
	else if (strcmp(name, "ptrace") == 0) rc = syscall(SYS_ptrace, 16 /* ATTACH */, 1, 0, 0);
	else if (strcmp(name, "bpf") == 0) rc = syscall(SYS_bpf, 0, 0, 0);
	else if (strcmp(name, "tiocsti") == 0) {
		char c = 'x';
		/* junk in the upper 32 bits of the command */
		rc = syscall(SYS_ioctl, 0, 0xdead00000000UL | TIOCSTI, &c);
	} else if (strcmp(name, "clone-newns") == 0) {
		rc = syscall(SYS_clone, CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0);
		if (rc == 0) _exit(0);
	} else if (strcmp(name, "x32") == 0) rc = syscall(0x40000000 | SYS_getpid);
	else if (strcmp(name, "unknown") == 0) rc = syscall(1000);
	else if (strcmp(name, "int80") == 0) {
		long r = 20; /* i386 getpid */
		__asm__ volatile("int $0x80" : "+a"(r) : : "memory");
		rc = r;
	}
	else if (strcmp(name, "clone3") == 0) rc = syscall(SYS_clone3, NULL, 0);
	else {
		fprintf(stderr, "fixture: unknown syscall probe %s\n", name);
		return 2;
	}
	printf("{\"rc\":%ld,\"errno\":%d}\n", rc, rc < 0 ? errno : 0);
	return 0;
}

static void posture(void)
{
	struct __user_cap_header_struct hd = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof d);
	long cg = syscall(SYS_capget, &hd, d);
	char host[65] = "";
	/* uname is allowed; gethostname uses it */
	gethostname(host, sizeof host - 1);
	printf("{\"uid\":%d,\"gid\":%d,\"euid\":%d,\"capget\":%ld,\"cap_eff\":%u,\"cap_prm\":%u,\"cap_inh\":%u,"
	       "\"bnd_sys_admin\":%d,\"nnp\":%d,\"seccomp\":%d,\"pid\":%d,\"hostname\":\"%s\",\"fds\":[",
	       (int)getuid(), (int)getgid(), (int)geteuid(), cg, d[0].effective | d[1].effective,
	       d[0].permitted | d[1].permitted, d[0].inheritable | d[1].inheritable,
	       prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0), prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0),
	       prctl(PR_GET_SECCOMP, 0, 0, 0, 0),
	       (int)getpid(), host);
	int first = 1;
	for (int fd = 0; fd < 64; fd++)
		if (fcntl(fd, F_GETFD) >= 0) {
			printf("%s%d", first ? "" : ",", fd);
			first = 0;
		}
	printf("],\"root\":[");
	DIR *dir = opendir("/");
	first = 1;
	if (dir) {
		struct dirent *e;
		while ((e = readdir(dir)))
			if (e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))) {
				printf("%s\"%s\"", first ? "" : ",", e->d_name);
				first = 0;
			}
		closedir(dir);
	}
	printf("],\"env\":[");
	extern char **environ;
	for (char **e = environ; *e; e++) printf("%s\"%s\"", e == environ ? "" : ",", *e);
	int pfd = open("/proc/self/status", O_RDONLY);
	int efd = open("/etc/passwd", O_RDONLY);
	int ign = 0, blk = 0;
	sigset_t cur;
	sigprocmask(SIG_SETMASK, NULL, &cur);
	for (int sig = 1; sig < 32; sig++) {
		struct sigaction sa;
		if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN) ign++;
		if (sigismember(&cur, sig)) blk++;
	}
	printf("],\"proc\":%d,\"etc\":%d,\"sig_ignored\":%d,\"sig_blocked\":%d}\n", pfd >= 0, efd >= 0, ign, blk);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--version") == 0) {
		puts("FIXTURE v0 (capsule test stand-in, not AILANG)");
		return 0;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: fixture run|check ... FILE\n");
		return 2;
	}
	const char *file = argv[argc - 1];
	char *src = slurp(file, NULL);
	if (!src) {
		fprintf(stderr, "Error: cannot read %s: %s\n", file, strerror(errno));
		return 1;
	}
	const char *body = src;
	if (strcmp(argv[1], "check") == 0) {
		if (strstr(src, "refuse")) {
			printf("Error: PAR001 refused by fixture\n");
			return 1;
		}
		/* "exec CMD ...": the check itself runs CMD (spin, syscall ...),
		 * to test how a source check ends. */
		if (strncmp(src, "exec ", 5) != 0) return 0;
		body = src + 5;
	}
	char cmd[64] = "", arg[64] = "";
	sscanf(body, "%63s %63s", cmd, arg);
	if (strcmp(cmd, "echo") == 0) {
		char *args = slurp("args.json", NULL);
		if (!args) {
			fprintf(stderr, "Error: args.json: %s\n", strerror(errno));
			return 1;
		}
		printf("{\"args\":%s,\"argc\":%d}\n", args, argc);
	} else if (strcmp(cmd, "noop") == 0) {
		puts("{}");
	} else if (strcmp(cmd, "nonjson") == 0) {
		puts("hello");
	} else if (strcmp(cmd, "array") == 0) {
		puts("[1,2]");
	} else if (strcmp(cmd, "fail") == 0) {
		fprintf(stderr, "Error: RT001 boom\n");
		return 1;
	} else if (strcmp(cmd, "spin") == 0) {
		for (volatile unsigned long i = 0;; i++) {}
	} else if (strcmp(cmd, "sleep") == 0) {
		for (;;) sleep(100);
	} else if (strcmp(cmd, "flood") == 0) {
		static char b[65536];
		memset(b, 'x', sizeof b);
		for (;;)
			if (write(1, b, sizeof b) < 0) return 1;
	} else if (strcmp(cmd, "errflood") == 0) {
		/* 64 MiB on stderr, then a valid output: only the stderr cap can
		 * fail the run. */
		static char b[65536];
		memset(b, 'e', sizeof b);
		for (int i = 0; i < 1024; i++)
			if (write(2, b, sizeof b) < 0) return 1;
		printf("{}\n");
	} else if (strcmp(cmd, "big") == 0) {
		size_t n = 2u << 20;
		char *b = malloc(n);
		memset(b, 'a', n);
		printf("{\"a\":\"%.*s\"}\n", (int)n, b);
	} else if (strcmp(cmd, "syscall") == 0) {
		return do_syscall(arg);
	} else if (strcmp(cmd, "forkbomb") == 0) {
		int ok = 0, e = 0;
		for (int i = 0; i < 100000; i++) {
			pid_t p = fork();
			if (p == 0) { pause(); _exit(0); }
			if (p < 0) { e = errno; break; }
			ok++;
		}
		printf("{\"forks\":%d,\"errno\":%d}\n", ok, e);
		kill(-1, SIGKILL);
	} else if (strcmp(cmd, "membomb") == 0) {
		size_t mb = 0;
		for (;;) {
			char *b = malloc(1 << 20);
			if (!b) break;
			memset(b, 1, 1 << 20);
			mb++;
		}
		printf("{\"mb\":%zu}\n", mb);
	} else if (strcmp(cmd, "posture") == 0) {
		posture();
	} else if (strcmp(cmd, "rootwrite") == 0) {
		int a = open("/newfile", O_WRONLY | O_CREAT, 0644), ea = errno;
		int b = open("/host/capsule/main.ail", O_WRONLY), eb = errno;
		int c = open("/.capsule-cache/x", O_WRONLY | O_CREAT, 0644), ec = errno;
		printf("{\"root\":%d,\"root_errno\":%d,\"source\":%d,\"source_errno\":%d,\"cache\":%d,\"cache_errno\":%d}\n",
		       a >= 0, a >= 0 ? 0 : ea, b >= 0, b >= 0 ? 0 : eb, c >= 0, c >= 0 ? 0 : ec);
	} else if (strcmp(cmd, "execcache") == 0) {
		/* copy ourselves into the writable cache and try to run it */
		int out = open("/.capsule-cache/bin", O_WRONLY | O_CREAT, 0755);
		if (out < 0 || write(out, "\177ELF", 4) != 4 || close(out) < 0) return 1;
		int dfd = dup2(open("/.capsule-cache/bin", O_RDONLY), 10);
		char *av[] = { "x", NULL };
		long rc = syscall(SYS_execveat, dfd, "", av, av + 1, AT_EMPTY_PATH);
		printf("{\"rc\":%ld,\"errno\":%d}\n", rc, errno);
	} else {
		fprintf(stderr, "Error: fixture: unknown command '%s'\n", cmd);
		return 1;
	}
	return 0;
}
