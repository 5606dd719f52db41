/* tlog/checkpoint.c: see checkpoint.h. */
#include "tlog/checkpoint.h"
#include "tlog/note.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tlog_checkpoint_format(const char *origin, int64_t size, const struct tlog_hash *root,
                           const char *extensions, char **out, struct world_err *err)
{
	if (!origin[0] || strchr(origin, '\n'))
		return werr(err, WX_BAD_INPUT, "checkpoint: the origin is empty or has a newline");
	if (size < 0)
		return werr(err, WX_BAD_INPUT, "checkpoint %s: negative size %lld", origin, (long long)size);
	const char *ext = extensions ? extensions : "";
	size_t el = strlen(ext);
	if (el && (ext[el - 1] != '\n' || ext[0] == '\n' || strstr(ext, "\n\n")))
		return werr(err, WX_BAD_INPUT, "checkpoint %s: extension lines must be non-empty, each ending in a newline",
		            origin);
	char b[45];
	tlog_hash_b64(root, b);
	size_t n = strlen(origin) + 1 + 20 + 1 + 44 + 1 + el + 1;
	char *s = malloc(n);
	if (!s)
		return werr(err, WX_FAIL, "checkpoint %s: out of memory", origin);
	snprintf(s, n, "%s\n%lld\n%s\n%s", origin, (long long)size, b, ext);
	*out = s;
	return 0;
}

/* The line starting at *p (before end), without its newline; NULL if no
 * newline ends it. */
static const char *next_line(const char **p, const char *end, size_t *len)
{
	const char *l = *p, *nl = memchr(l, '\n', (size_t)(end - l));
	if (!nl)
		return NULL;
	*len = (size_t)(nl - l);
	*p = nl + 1;
	return l;
}

int tlog_checkpoint_parse(const char *text, size_t len, struct tlog_checkpoint *cp, struct world_err *err)
{
	const char *p = text, *end = text + len, *l;
	size_t ll;
	memset(cp, 0, sizeof *cp);
	if (memchr(text, '\0', len))
		return werr(err, WX_BAD_INPUT, "checkpoint: a NUL byte in the text");
	/* origin */
	if (!(l = next_line(&p, end, &ll)) || ll == 0)
		return werr(err, WX_BAD_INPUT, "checkpoint: no origin line");
	const char *origin = l;
	size_t olen = ll;
	/* size: decimal, no sign, no leading zero, fits in int64 */
	if (!(l = next_line(&p, end, &ll)) || ll == 0 || ll > 19 || (l[0] == '0' && ll > 1))
		return werr(err, WX_BAD_INPUT, "checkpoint: line 2 is not a tree size (decimal, no leading zeros)");
	uint64_t size = 0;
	for (size_t i = 0; i < ll; i++) {
		if (l[i] < '0' || l[i] > '9')
			return werr(err, WX_BAD_INPUT, "checkpoint: line 2 is not a tree size (decimal, no leading zeros)");
		size = size * 10 + (uint64_t)(l[i] - '0');
	}
	if (size > (uint64_t)INT64_MAX)
		return werr(err, WX_BAD_INPUT, "checkpoint: tree size over 2^63-1");
	/* root */
	if (!(l = next_line(&p, end, &ll)))
		return werr(err, WX_BAD_INPUT, "checkpoint: no root hash line");
	struct tlog_hash root;
	if (tlog_hash_parse_b64(l, ll, &root, err) < 0)
		return werr_prefix(err, "checkpoint: line 3");
	/* extension lines: each non-empty, each ending in a newline */
	const char *ext = p;
	for (int line = 4; p < end; line++) {
		if (!(l = next_line(&p, end, &ll)))
			return werr(err, WX_BAD_INPUT, "checkpoint: line %d does not end with a newline", line);
		if (ll == 0)
			return werr(err, WX_BAD_INPUT, "checkpoint: line %d (an extension line) is empty", line);
	}
	cp->origin = strndup(origin, olen);
	cp->extensions = strndup(ext, (size_t)(end - ext));
	if (!cp->origin || !cp->extensions) {
		tlog_checkpoint_free(cp);
		return werr(err, WX_FAIL, "checkpoint: out of memory");
	}
	cp->size = (int64_t)size;
	cp->root = root;
	return 0;
}

int tlog_checkpoint_open(const char *vkey_text, const char *signed_note, size_t len, struct tlog_checkpoint *cp,
                         struct world_err *err)
{
	char *text = NULL;
	memset(cp, 0, sizeof *cp);
	if (note_verify(vkey_text, signed_note, len, &text, err) < 0)
		return -1;
	int rc = tlog_checkpoint_parse(text, strlen(text), cp, err);
	free(text);
	return rc;
}

void tlog_checkpoint_free(struct tlog_checkpoint *cp)
{
	free(cp->origin);
	free(cp->extensions);
	cp->origin = cp->extensions = NULL;
}
