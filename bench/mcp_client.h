/* bench/mcp_client.h: the benchmarks' MCP client: one keep-alive HTTP/1.1
 * connection on 127.0.0.1 and one POST /mcp/ at a time, Content-Length
 * answers only (which is what the daemon sends for a JSON answer). Small on
 * purpose, so that the client costs the figures as little as it can; the
 * official SDK clients are what the tests use. Header-only, like bench.h. */
#ifndef WORLD_BENCH_MCP_CLIENT_H
#define WORLD_BENCH_MCP_CLIENT_H
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static inline int bench_mcp_dial(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) return -1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int one = 1;
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0 ||
	    connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One POST /mcp/ of body on *fd (dialled when -1; a kept-alive connection
 * the daemon closed is dialled again once). The whole answer, headers and
 * body, is left NUL-terminated in buf. Returns 0 when it is HTTP 200 with a
 * JSON-RPC result that is not isError and, when must is set, whose body
 * contains must; -1 otherwise. */
static inline int bench_mcp_call(int port, const char *cred, int *fd, const char *body, size_t blen, char *buf,
                                 size_t cap, const char *must)
{
	char req[1024];
	int hl = snprintf(req, sizeof req,
	                  "POST /mcp/ HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n"
	                  "Content-Type: application/json\r\nAccept: application/json, text/event-stream;q=0.5\r\n"
	                  "MCP-Protocol-Version: 2025-06-18\r\nContent-Length: %zu\r\n\r\n", port, cred, blen);
	if (hl < 0 || (size_t)hl >= sizeof req) return -1;
	buf[0] = 0;
	for (int attempt = 0; attempt < 2; attempt++) {
		if (*fd < 0 && (*fd = bench_mcp_dial(port)) < 0) return -1;
		if (write(*fd, req, (size_t)hl) != hl || write(*fd, body, blen) != (ssize_t)blen) goto retry;
		size_t n = 0;
		char *end = NULL;
		while (!(end = memmem(buf, n, "\r\n\r\n", 4))) {
			if (n >= cap - 1) return -1;
			ssize_t r = read(*fd, buf + n, cap - 1 - n);
			if (r <= 0) goto retry;
			n += (size_t)r;
		}
		buf[n] = 0;
		size_t head = (size_t)(end + 4 - buf);
		char *cl = strcasestr(buf, "\r\nContent-Length:");
		if (!cl || cl > end) return -1;
		size_t want = head + strtoul(cl + 17, NULL, 10);
		if (want >= cap) return -1;
		while (n < want) {
			ssize_t r = read(*fd, buf + n, want - n);
			if (r <= 0) goto retry;
			n += (size_t)r;
		}
		buf[n] = 0;
		char *closing = strcasestr(buf, "\r\nConnection: close");
		int good = strncmp(buf, "HTTP/1.1 200", 12) == 0 && strstr(buf + head, "\"result\"") &&
		           !strstr(buf + head, "\"isError\":true") && (!must || strstr(buf + head, must));
		if (closing && closing < end) {
			close(*fd);
			*fd = -1;
		}
		return good ? 0 : -1;
	retry:
		close(*fd);
		*fd = -1;
	}
	return -1;
}
#endif
