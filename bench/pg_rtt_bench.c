/* bench/pg_rtt_bench.c: the delay proxy of bench/pg_rtt_bench.sh (issue 44,
 * item 1). Figures only.
 *
 *   pg_rtt_bench proxy PORT_FILE TARGET_PORT DELAY_MS
 *     listens on 127.0.0.1 (a port of the kernel's choice, written to
 *     PORT_FILE once it listens) and forwards every connection to
 *     127.0.0.1:TARGET_PORT, each byte held DELAY_MS (a decimal, 0 allowed)
 *     in each direction: what a database on another host or zone adds to
 *     every round trip (2 x DELAY_MS). Runs until SIGTERM or SIGINT.
 *
 * Each direction of a connection is two threads: one reads what arrives
 * and stamps it with the time it is due (arrival + delay), the other
 * sends each chunk once it is due, in order. So bytes that arrive together
 * leave together, and a burst that arrives while an earlier one waits is
 * not delayed twice: the delay is per byte, not per read. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long long delay_ns;
static int target_port;

struct chunk {
	struct chunk *next;
	long long due; /* CLOCK_MONOTONIC ns */
	size_t n;
	char data[];
};

/* one direction: from -> to */
struct dir {
	int from, to;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct chunk *head, **tail;
	int eof;
};

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void *reader(void *arg)
{
	struct dir *d = arg;
	for (;;) {
		char buf[65536];
		ssize_t r = read(d->from, buf, sizeof buf);
		if (r < 0 && errno == EINTR) continue;
		struct chunk *c = r > 0 ? malloc(sizeof *c + (size_t)r) : NULL;
		pthread_mutex_lock(&d->mu);
		if (!c) {
			d->eof = 1; /* end of stream, an error, or out of memory: the direction ends */
		} else {
			c->next = NULL;
			c->due = now_ns() + delay_ns;
			c->n = (size_t)r;
			memcpy(c->data, buf, (size_t)r);
			*d->tail = c;
			d->tail = &c->next;
		}
		pthread_cond_signal(&d->cv);
		pthread_mutex_unlock(&d->mu);
		if (!c) return NULL;
	}
}

static void *writer(void *arg)
{
	struct dir *d = arg;
	for (;;) {
		pthread_mutex_lock(&d->mu);
		while (!d->head && !d->eof) pthread_cond_wait(&d->cv, &d->mu);
		struct chunk *c = d->head;
		if (c) {
			d->head = c->next;
			if (!d->head) d->tail = &d->head;
		}
		pthread_mutex_unlock(&d->mu);
		if (!c) break; /* eof, all sent */
		long long wait = c->due - now_ns();
		if (wait > 0) {
			struct timespec ts = { (time_t)(wait / 1000000000LL), (long)(wait % 1000000000LL) };
			while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
		}
		size_t off = 0;
		while (off < c->n) {
			ssize_t w = write(d->to, c->data + off, c->n - off);
			if (w < 0 && errno == EINTR) continue;
			if (w <= 0) break;
			off += (size_t)w;
		}
		int broken = off < c->n;
		free(c);
		if (broken) break;
	}
	/* the other side learns the end (the reader of the opposite direction
	 * then sees it too) */
	shutdown(d->to, SHUT_WR);
	shutdown(d->from, SHUT_RD);
	return NULL;
}

static int dial_target(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) return -1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((unsigned short)target_port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void *conn_main(void *arg)
{
	int cfd = (int)(intptr_t)arg;
	int sfd = dial_target();
	if (sfd < 0) {
		fprintf(stderr, "pg_rtt_bench proxy: connect 127.0.0.1:%d: %s\n", target_port, strerror(errno));
		close(cfd);
		return NULL;
	}
	struct dir up = { .from = cfd, .to = sfd }, down = { .from = sfd, .to = cfd };
	struct dir *ds[2] = { &up, &down };
	pthread_t t[4];
	int started = 0;
	for (int i = 0; i < 2; i++) {
		pthread_mutex_init(&ds[i]->mu, NULL);
		pthread_cond_init(&ds[i]->cv, NULL);
		ds[i]->tail = &ds[i]->head;
	}
	for (int i = 0; i < 2; i++) {
		if (pthread_create(&t[started], NULL, reader, ds[i]) == 0) started++;
		if (pthread_create(&t[started], NULL, writer, ds[i]) == 0) started++;
	}
	for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++) {
		for (struct chunk *c = ds[i]->head, *n; c; c = n) {
			n = c->next;
			free(c);
		}
		pthread_mutex_destroy(&ds[i]->mu);
		pthread_cond_destroy(&ds[i]->cv);
	}
	close(cfd);
	close(sfd);
	return NULL;
}

static int proxy(const char *port_file, const char *target, const char *delay)
{
	char *end;
	double ms = strtod(delay, &end);
	target_port = atoi(target);
	if (*end || ms < 0 || ms > 10000 || target_port < 1 || target_port > 65535) {
		fprintf(stderr, "pg_rtt_bench proxy: bad target port %s or delay %s (ms, 0..10000)\n", target, delay);
		return 2;
	}
	delay_ns = (long long)(ms * 1e6);
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof a;
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, 64) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &al) != 0) {
		fprintf(stderr, "pg_rtt_bench proxy: listen on 127.0.0.1: %s\n", strerror(errno));
		return 1;
	}
	FILE *f = fopen(port_file, "we");
	if (!f || fprintf(f, "%d\n", ntohs(a.sin_port)) < 0 || fclose(f) != 0) {
		fprintf(stderr, "pg_rtt_bench proxy: write %s: %s\n", port_file, strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd < 0) {
			if (errno == EINTR || errno == ECONNABORTED) continue;
			fprintf(stderr, "pg_rtt_bench proxy: accept: %s\n", strerror(errno));
			return 1;
		}
		int one = 1;
		setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		pthread_t t;
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &at, conn_main, (void *)(intptr_t)cfd) != 0) {
			fprintf(stderr, "pg_rtt_bench proxy: a thread for a connection: out of resources\n");
			close(cfd);
		}
		pthread_attr_destroy(&at);
	}
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "proxy") == 0) return proxy(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: pg_rtt_bench proxy PORT_FILE TARGET_PORT DELAY_MS\n");
	return 2;
}
