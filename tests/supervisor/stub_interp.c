/* tests/supervisor/stub_interp.c: a static stand-in interpreter honouring
 * the §2 command line, whose behaviour is chosen by the first word of the
 * source file, so the supervisor's tests can make an interpreter misbehave
 * on purpose (spin, flood, fork, print a non-object...). Not AILANG. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static char *slurp(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0) return NULL;
	size_t cap = 4096, len = 0;
	char *b = malloc(cap);
	for (;;) {
		if (len + 1 >= cap) b = realloc(b, cap *= 2);
		ssize_t n = read(fd, b + len, cap - len - 1);
		if (n <= 0) break;
		len += (size_t)n;
	}
	close(fd);
	b[len] = '\0';
	return b;
}

static void flood(int fd)
{
	static char buf[65536];
	memset(buf, 'x', sizeof buf);
	for (;;)
		if (write(fd, buf, sizeof buf) < 0) _exit(3);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		puts("STUB-interp v0.0.1 (test double, not AILANG)");
		return 0;
	}
	if (argc < 3) return 2;
	const char *file = argv[argc - 1];
	char *src = slurp(file);
	if (!src) {
		fprintf(stderr, "Error: cannot read %s\n", file);
		return 1;
	}
	if (strcmp(argv[1], "check") == 0) {
		char *imp = strstr(src, "import world/");
		if (imp) {
			char name[64];
			sscanf(imp + 7, "%63s", name);
			printf("Error: LDR001: module not found: %s\n", name);
			return 1;
		}
		if (strstr(src, "check-spin")) for (;;) {}
		return 0;
	}
	if (strcmp(argv[1], "run") != 0) return 2;
	/* args.json is a JSON string literal: embedding it keeps it valid JSON. */
	char *args = slurp("args.json");
	if (!args) {
		fprintf(stderr, "Error: cannot read args.json\n");
		return 1;
	}
	int plan = strstr(args, "\\\"phase\\\":\\\"plan\\\"") != NULL;
	int finish = strstr(args, "\\\"phase\\\":\\\"finish\\\"") != NULL;
	char word[64] = "";
	sscanf(src, "%63s", word);
	if (strcmp(word, "echo") == 0) {
		printf("{\"input\":%s}\n", args);
	} else if (strcmp(word, "effect") == 0) {
		if (plan)
			printf("{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"e1\",\"effect\":\"Test.Echo\","
			       "\"scope\":\"s\",\"cost\":1,\"payload\":{\"x\":1}}],\"finish\":true,\"result\":null}\n");
		else if (finish)
			printf("{\"finished\":true,\"input\":%s}\n", args);
		else
			return 1;
	} else if (strcmp(word, "stdin") == 0) {
		/* What fd 0 is: open at end of stream, closed, or carrying data. */
		char c;
		ssize_t n = read(0, &c, 1);
		printf("{\"stdin\":\"%s\"}\n", n == 0 ? "eof" : n > 0 ? "data" : errno == EBADF ? "closed" : "error");
	} else if (strcmp(word, "where") == 0) {
		/* Report where the run happens: working directory, sandbox root,
		 * the argv's args file and source path, and the input read. */
		if (plan) {
			printf("{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"e1\",\"effect\":\"Test.Echo\","
			       "\"scope\":\"s\",\"cost\":1,\"payload\":{}}],\"finish\":true,\"result\":null}\n");
			return 0;
		}
		char cwd[4096];
		if (!getcwd(cwd, sizeof cwd)) return 1;
		const char *argsfile = "", *sandbox = getenv("AILANG_FS_SANDBOX");
		for (int i = 1; i + 1 < argc; i++)
			if (strcmp(argv[i], "--args-file") == 0) argsfile = argv[i + 1];
		/* What else the root allows: a new file, removing or renaming
		 * args.json (0 = it worked, else errno). */
		int fd = open("escape-new-file", O_WRONLY | O_CREAT | O_EXCL, 0600);
		int create_errno = fd >= 0 ? 0 : errno;
		if (fd >= 0) { close(fd); unlink("escape-new-file"); }
		int rename_errno = rename("args.json", "args2.json") == 0 ? 0 : errno;
		if (rename_errno == 0) rename("args2.json", "args.json");
		int unlink_errno = unlink("host/capsule/main.ail") == 0 ? 0 : errno;
		printf("{\"cwd\":\"%s\",\"sandbox\":\"%s\",\"argsfile\":\"%s\",\"source\":\"%s\",\"finish\":%s,"
		       "\"create_errno\":%d,\"rename_errno\":%d,\"unlink_errno\":%d,\"input\":%s}\n",
		       cwd, sandbox ? sandbox : "", argsfile, file, finish ? "true" : "false", create_errno, rename_errno,
		       unlink_errno, args);
	} else if (strcmp(word, "refuse") == 0) {
		printf("{\"plan\":\"world/effect-plan/v1\",\"effects\":[],\"finish\":false,\"result\":{\"ok\":false,\"refused\":\"no\"}}\n");
	} else if (strcmp(word, "spin") == 0) {
		for (;;) {}
	} else if (strcmp(word, "spin-finish") == 0) {
		if (finish) for (;;) {}
		printf("{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"e1\",\"effect\":\"Test.Echo\","
		       "\"scope\":\"s\",\"cost\":1,\"payload\":{}}],\"finish\":true,\"result\":null}\n");
	} else if (strcmp(word, "flood-stdout") == 0) {
		flood(1);
	} else if (strcmp(word, "flood-stderr") == 0) {
		flood(2);
	} else if (strcmp(word, "notobject") == 0) {
		puts("[1,2,3]");
	} else if (strcmp(word, "badutf8") == 0) {
		puts("{\"a\":\"\xff\"}");
	} else if (strcmp(word, "big") == 0) {
		fputs("{\"x\":\"", stdout);
		for (int i = 0; i < (1 << 20) + 10; i++) putchar('a');
		puts("\"}");
	} else if (strcmp(word, "denied") == 0) {
		/* keyctl is outside every capsule profile. */
		long rc = syscall(SYS_keyctl, 0, 0, 0, 0, 0);
		printf("{\"keyctl\":%ld}\n", rc);
	} else if (strcmp(word, "denied-finish") == 0) {
		/* the plan's effect runs; then the finish phase is denied */
		if (plan) {
			printf("{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"e1\",\"effect\":\"Test.Echo\","
			       "\"scope\":\"s\",\"cost\":1,\"payload\":{\"x\":1}}],\"finish\":true,\"result\":null}\n");
			return 0;
		}
		long rc = syscall(SYS_keyctl, 0, 0, 0, 0, 0);
		printf("{\"keyctl\":%ld}\n", rc);
	} else if (strcmp(word, "denied-ioctl") == 0) {
		/* TIOCSTI (0x5412) is not on the ioctl allowlist: the refused
		 * request is named (the fd need not be a terminal: the filter
		 * decides before the kernel looks at it). */
		char c = 'x';
		long rc = syscall(SYS_ioctl, 1, 0x5412UL, &c);
		printf("{\"ioctl\":%ld}\n", rc);
	} else if (strcmp(word, "fail") == 0) {
		fprintf(stderr, "Error: RT001 the stub was told to fail\n");
		return 1;
	} else if (strcmp(word, "orphan") == 0 || strcmp(word, "orphan-wait") == 0) {
		/* Leave a sleeping child behind, named "orph" + the digits of the
		 * input, so the test can look for it; the capsule must not leave it. */
		char name[16] = "orph";
		size_t k = 4;
		for (const char *a = args; *a && k < 15; a++)
			if (*a >= '0' && *a <= '9') name[k++] = *a;
		name[k] = '\0';
		pid_t p = fork();
		if (p == 0) {
			prctl(PR_SET_NAME, name);
			close(0); close(1); close(2);
			for (;;) pause();
		}
		/* orphan-wait: give the test time to see the sleeper alive (control). */
		if (strcmp(word, "orphan-wait") == 0) sleep(1);
		printf("{\"orphan\":%d}\n", (int)p);
	} else {
		fprintf(stderr, "Error: stub: unknown behaviour '%s'\n", word);
		return 1;
	}
	return 0;
}
