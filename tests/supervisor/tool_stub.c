/* tests/supervisor/tool_stub.c: a static stand-in tool interpreter for the
 * supervisor's tool-run tests (sup_run_tool): the first argument says what
 * to do, so a test can read, write and list paths inside a capsule, echo its
 * stdin, exit with a code, die by a signal, spin, flood or make a denied
 * syscall. Results go to stdout as plain text ("error: ENAME" on failure).
 * Not AILANG; static and unsanitized (it runs inside capsules). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *ename(int e)
{
	switch (e) {
	case ENOENT: return "ENOENT";
	case EROFS: return "EROFS";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ELOOP: return "ELOOP";
	case ENOTDIR: return "ENOTDIR";
	case EEXIST: return "EEXIST";
	case EXDEV: return "EXDEV";
	default: return "EOTHER";
	}
}

static int error_out(void)
{
	printf("error: %s\n", ename(errno));
	return 1;
}

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
		puts("TOOL-stub v0.0.1 (test double, not AILANG)");
		return 0;
	}
	if (argc < 2) return 2;
	const char *cmd = argv[1], *arg = argc > 2 ? argv[2] : "";
	/* The interpreter contract's verbs, for the Ailang handlers' tests:
	 * what they do is chosen by the first word of FILE. */
	if (strcmp(cmd, "builtins") == 0) {
		if (argc > 2 && strcmp(argv[2], "--json") == 0)
			puts("{\"count\":1,\"builtins\":[{\"name\":\"stub\",\"module\":\"std/stub\","
			     "\"signature\":\"() -> string\",\"effect\":\"\"}]}");
		else
			puts("std/stub stub () -> string");
		return 0;
	}
	if ((strcmp(cmd, "run") == 0 || strcmp(cmd, "check") == 0 || strcmp(cmd, "iface") == 0) && argc > 2) {
		const char *file = argv[argc - 1];
		char word[64] = "";
		FILE *f = fopen(file, "r");
		if (!f || fscanf(f, "%63s", word) != 1) {
			fprintf(stderr, "Error: LDR002 at %s:1:1: cannot read %s\n", file, file);
			return 1;
		}
		fclose(f);
		if (strcmp(word, "spin") == 0) for (;;) {}
		if (strcmp(word, "flood") == 0) {
			static char buf[65536];
			memset(buf, 'x', sizeof buf);
			for (;;)
				if (write(1, buf, sizeof buf) < 0) return 3;
		}
		if (strcmp(word, "keyctl") == 0) {
			syscall(SYS_keyctl, 0, 0, 0, 0, 0);
			return 0;
		}
		if (strcmp(cmd, "check") == 0 && strcmp(word, "diags") == 0) {
			/* the diagnostic forms the handler reads, on both streams */
			puts("LDR001: module not found: world/x");
			fprintf(stderr, "Error: TC_X at %s:3:7: bad thing in %s\nnot a diagnostic\nError: PAR001 oops\n"
			        "Error: TC_Y at /%s:4:1: see network/diags.ail\n", file, file, file);
			return 1;
		}
		if (strcmp(word, "forge") == 0) {
			/* prints what a forger would, then exits 3 */
			puts("{\"ok\":true,\"admitted\":true,\"exit_code\":0,\"limit\":null,\"decision\":\"allowed\"}");
			fputs("limit: none\nexit_code: 0\n", stderr);
			return 3;
		}
		printf("%s %s\n", cmd, file);
		return 0;
	}
	if (strcmp(cmd, "cat") == 0) {
		int fd = open(arg, O_RDONLY);
		if (fd < 0) return error_out();
		char buf[4096];
		ssize_t n;
		while ((n = read(fd, buf, sizeof buf)) > 0) fwrite(buf, 1, (size_t)n, stdout);
		return n < 0 ? error_out() : 0;
	}
	if (strcmp(cmd, "write") == 0) {
		int fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) return error_out();
		if (write(fd, "written\n", 8) != 8) return error_out();
		close(fd);
		puts("ok");
		return 0;
	}
	if (strcmp(cmd, "mkdir") == 0) {
		if (mkdir(arg, 0755) < 0) return error_out();
		puts("ok");
		return 0;
	}
	if (strcmp(cmd, "ls") == 0) {
		DIR *d = opendir(arg);
		if (!d) return error_out();
		char *names[256];
		size_t n = 0;
		struct dirent *e;
		while ((e = readdir(d)) && n < 256)
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) names[n++] = strdup(e->d_name);
		closedir(d);
		qsort(names, n, sizeof names[0], cmp);
		for (size_t i = 0; i < n; i++) printf("%s%s", i ? " " : "", names[i]);
		putchar('\n');
		return 0;
	}
	if (strcmp(cmd, "stdin") == 0) {
		char buf[65536];
		ssize_t n;
		while ((n = read(0, buf, sizeof buf)) > 0) fwrite(buf, 1, (size_t)n, stdout);
		return 0;
	}
	if (strcmp(cmd, "say") == 0) { /* say TEXT [CODE] [ERRTEXT] */
		fputs(arg, stdout);
		if (argc > 4) fputs(argv[4], stderr);
		return argc > 3 ? atoi(argv[3]) : 0;
	}
	if (strcmp(cmd, "segv") == 0) {
		fflush(stdout);
		*(volatile int *)0 = 1;
		return 0;
	}
	if (strcmp(cmd, "spin") == 0) for (;;) {}
	if (strcmp(cmd, "flood") == 0) {
		static char buf[65536];
		memset(buf, 'x', sizeof buf);
		int fd = atoi(arg) == 2 ? 2 : 1;
		for (;;)
			if (write(fd, buf, sizeof buf) < 0) return 3;
	}
	if (strcmp(cmd, "syscall") == 0 && strcmp(arg, "keyctl") == 0) {
		long rc = syscall(SYS_keyctl, 0, 0, 0, 0, 0);
		printf("keyctl returned %ld\n", rc);
		return 0;
	}
	fprintf(stderr, "tool-stub: unknown command %s\n", cmd);
	return 2;
}
