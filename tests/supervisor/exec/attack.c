/* tests/supervisor/exec/attack.c: "project code" an agent could write, built
 * with make inside the exec capsule by tests/supervisor/exec.sh (and outside
 * it, unconfined, as the control). One attempt per run:
 *   net PORT        connect to 127.0.0.1:PORT         ok: "connected"
 *   read PATH       read a file                       ok: "read N"
 *   write PATH      create and write a file           ok: "wrote"
 *   daemon TAG      double fork + setsid + exec sleep TAG (then return at once)
 *   forkbomb N      fork N children that wait        prints "forks K"
 *   memhog MB       allocate and touch MB MiB        ok: "touched MB"
 *   flood BYTES     write BYTES to stdout
 *   spin            loop forever
 *   cpuforks N MS   N children each spin MS ms of CPU time; "done" when all ended
 *   unshare         unshare(CLONE_NEWUSER)            ok: "unshared"
 *   mount DIR       mount a tmpfs on DIR              ok: "mounted"
 *   ptrace          PTRACE_ATTACH to an own child     ok: "attached"
 *   procinit        read /proc/1/environ and /proc/1/maps, write a fake
 *                   "W 0" to the init's status pipe /proc/1/fd/3; prints
 *                   "environ:R maps:R status:R" (R "read N", "wrote" or the
 *                   errno's name), then exits 3
 *   setuid          build suid.bin (open 0755), chmod 04755 it, open(O_CREAT,
 *                   04755) suid2.bin, fchmodat suid.bin 02755; prints
 *                   "chmod:R open:R fchmodat:R" (R "ok" or the errno's name)
 * Exit 0 when the attempt got through, 1 when refused (errno printed). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int fail(const char *what)
{
	printf("refused %s: %s\n", what, strerror(errno));
	return 1;
}

static const char *ename(int e)
{
	return e == EACCES ? "EACCES" : e == EPERM ? "EPERM" : e == ENOENT ? "ENOENT" : strerror(e);
}

static void read_proc(const char *what, const char *path)
{
	char b[4096];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, b, sizeof b);
	if (n < 0) printf("%s:%s ", what, ename(errno));
	else printf("%s:read %zd ", what, n);
	if (fd >= 0) close(fd);
}

int main(int argc, char **argv)
{
	if (argc < 2) return 2;
	const char *m = argv[1], *a = argc > 2 ? argv[2] : "";
	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(m, "net")) {
		int s = socket(AF_INET, SOCK_STREAM, 0);
		if (s < 0) return fail("socket");
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(a)) };
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (connect(s, (struct sockaddr *)&sa, sizeof sa) < 0) return fail("connect");
		printf("connected\n");
		return 0;
	}
	if (!strcmp(m, "read")) {
		char b[4096];
		int fd = open(a, O_RDONLY);
		if (fd < 0) return fail("open");
		ssize_t n = read(fd, b, sizeof b);
		if (n < 0) return fail("read");
		printf("read %zd\n", n);
		return 0;
	}
	if (!strcmp(m, "write")) {
		int fd = open(a, O_WRONLY | O_CREAT | O_TRUNC, 0755);
		if (fd < 0) return fail("open");
		if (write(fd, "#!/bin/sh\necho pwned\n", 21) != 21) return fail("write");
		printf("wrote\n");
		return 0;
	}
	if (!strcmp(m, "daemon")) {
		pid_t p = fork();
		if (p < 0) return fail("fork");
		if (p == 0) {
			setsid();
			if (fork() == 0) {
				for (int fd = 0; fd < 3; fd++) close(fd);
				execl("/bin/sleep", "sleep", a, (char *)NULL);
				_exit(1);
			}
			_exit(0);
		}
		waitpid(p, NULL, 0);
		printf("daemon left\n");
		return 0;
	}
	if (!strcmp(m, "forkbomb")) {
		int n = atoi(a), k = 0;
		setpgid(0, 0); /* a group of its own: the kill below ends only the bomb */
		for (; k < n; k++) {
			pid_t p = fork();
			if (p < 0) break;
			if (p == 0) {
				pause();
				_exit(0);
			}
		}
		printf("forks %d\n", k);
		kill(0, SIGKILL); /* the whole group, this process too */
		return k == n ? 0 : 1;
	}
	if (!strcmp(m, "memhog")) {
		long mb = atol(a);
		for (long i = 0; i < mb; i++) {
			char *p = malloc(1 << 20);
			if (!p) return fail("malloc");
			memset(p, 1, 1 << 20);
		}
		printf("touched %ld\n", mb);
		return 0;
	}
	if (!strcmp(m, "flood")) {
		static char b[65536];
		memset(b, 'x', sizeof b);
		long long left = atoll(a);
		while (left > 0) {
			ssize_t w = write(1, b, left < (long long)sizeof b ? (size_t)left : sizeof b);
			if (w <= 0) return fail("write");
			left -= w;
		}
		return 0;
	}
	if (!strcmp(m, "cpuforks")) {
		int n = atoi(a);
		long ms = argc > 3 ? atol(argv[3]) : 100;
		for (int i = 0; i < n; i++) {
			pid_t p = fork();
			if (p < 0) return fail("fork");
			if (p == 0) {
				struct timespec t;
				do {
					for (volatile int k = 0; k < 100000; k++) {}
					clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
				} while (t.tv_sec * 1000L + t.tv_nsec / 1000000L < ms);
				_exit(0);
			}
		}
		while (wait(NULL) > 0) {}
		printf("done\n");
		return 0;
	}
	if (!strcmp(m, "spin")) {
		for (volatile unsigned long i = 0;; i++) {}
	}
	if (!strcmp(m, "unshare")) {
		if (unshare(CLONE_NEWUSER) < 0) return fail("unshare");
		printf("unshared\n");
		return 0;
	}
	if (!strcmp(m, "mount")) {
		if (mount("none", a, "tmpfs", 0, "size=1m") < 0) return fail("mount");
		printf("mounted\n");
		return 0;
	}
	if (!strcmp(m, "ptrace")) {
		pid_t p = fork();
		if (p == 0) {
			pause();
			_exit(0);
		}
		long r = ptrace(PTRACE_ATTACH, p, NULL, NULL);
		int e = errno;
		kill(p, SIGKILL);
		waitpid(p, NULL, 0);
		errno = e;
		if (r < 0) return fail("ptrace");
		printf("attached\n");
		return 0;
	}
	if (!strcmp(m, "procinit")) {
		read_proc("environ", "/proc/1/environ");
		read_proc("maps", "/proc/1/maps");
		int fd = open("/proc/1/fd/3", O_WRONLY);
		if (fd < 0 || write(fd, "W 0\n", 4) != 4) printf("status:%s\n", ename(errno));
		else printf("status:wrote\n");
		return 3;
	}
	if (!strcmp(m, "setuid")) {
		int fd = open("suid.bin", O_WRONLY | O_CREAT | O_TRUNC, 0755);
		if (fd < 0 || write(fd, "#!/bin/sh\nid\n", 13) != 13) return fail("open");
		close(fd);
		printf("chmod:%s ", chmod("suid.bin", 04755) == 0 ? "ok" : ename(errno));
		fd = open("suid2.bin", O_WRONLY | O_CREAT | O_TRUNC, 04755);
		printf("open:%s ", fd >= 0 ? "ok" : ename(errno));
		printf("fchmodat:%s\n", fchmodat(AT_FDCWD, "suid.bin", 02755, 0) == 0 ? "ok" : ename(errno));
		return 0;
	}
	return 2;
}
