/* interp/value.c: memory, errors, names and values of ailang-lite.
 *
 * Owns: the bounded arena (every allocation is counted against the heap
 * cap and lives until exit, so there is no collector and nothing leaks),
 * the error reporter with its longjmp handler, the C-stack depth guard,
 * name interning, value constructors, structural equality and ordering,
 * and the `show` rendering. */
#include "interp/ail.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* ---------------- arena ---------------- */

struct chunk { struct chunk *next; size_t size, used; char data[]; };
static struct chunk *chunks;
static size_t heap_used, heap_cap;
#define CHUNK_SIZE (1u << 20)

void ail_heap_init(void)
{
	heap_cap = AIL_HEAP_CAP_DEFAULT;
	const char *e = getenv("AILANG_LITE_HEAP_MB");
	if (e && *e) {
		char *end;
		unsigned long mb = strtoul(e, &end, 10);
		if (*end == 0 && mb >= 1 && mb <= 65536)
			heap_cap = (size_t)mb << 20;
	}
}

size_t ail_heap_used(void) { return heap_used; }
void ail_heap_set_cap(size_t bytes) { heap_cap = bytes; }

static struct chunk *new_chunk(size_t size)
{
	if (heap_used + size + sizeof(struct chunk) > heap_cap)
		ail_fail("RT_HEAP", 0, 0, "heap cap of %zu MiB exceeded", heap_cap >> 20);
	/* calloc: fresh pages come zeroed, so allocations need no memset */
	struct chunk *c = calloc(1, sizeof *c + size);
	if (!c)
		ail_fail("RT_HEAP", 0, 0, "out of memory (malloc of %zu bytes failed)", size);
	heap_used += size + sizeof *c;
	c->size = size;
	c->used = 0;
	return c;
}

void *ail_alloc(size_t n)
{
	n = (n + 7) & ~(size_t)7;
	if (n == 0)
		n = 8;
	if (n > CHUNK_SIZE / 4) {
		/* big block: its own chunk, linked behind the current one */
		if (n > heap_cap)
			ail_fail("RT_HEAP", 0, 0, "heap cap of %zu MiB exceeded (one allocation of %zu bytes)", heap_cap >> 20, n);
		struct chunk *c = new_chunk(n);
		c->used = n;
		if (chunks) {
			c->next = chunks->next;
			chunks->next = c;
		} else {
			c->next = NULL;
			chunks = c;
		}
		return c->data;
	}
	if (!chunks || chunks->size - chunks->used < n) {
		struct chunk *c = new_chunk(CHUNK_SIZE);
		c->next = chunks;
		chunks = c;
	}
	void *p = chunks->data + chunks->used;
	chunks->used += n;
	return p;
}

/* Growable blocks outside the arena (the token array): realloc avoids
 * keeping every outgrown copy, and the bytes still count against the cap. */
#define MAX_GROW 8
static struct { void *p; size_t size; } grow_blocks[MAX_GROW];

void *ail_grow(void *old, size_t new_size)
{
	int slot = -1;
	for (int i = 0; i < MAX_GROW; i++)
		if (old ? grow_blocks[i].p == old : !grow_blocks[i].p) {
			slot = i;
			break;
		}
	if (slot < 0)
		ail_fail("RT_INTERNAL", 0, 0, "too many growable blocks");
	size_t old_size = grow_blocks[slot].size;
	if (new_size > old_size && heap_used + (new_size - old_size) > heap_cap)
		ail_fail("RT_HEAP", 0, 0, "heap cap of %zu MiB exceeded", heap_cap >> 20);
	void *p = realloc(old, new_size);
	if (!p)
		ail_fail("RT_HEAP", 0, 0, "out of memory (realloc of %zu bytes failed)", new_size);
	heap_used = heap_used - old_size + new_size;
	grow_blocks[slot].p = p;
	grow_blocks[slot].size = new_size;
	return p;
}

static void intern_reset(void);

void ail_reset(void)
{
	ail_heap_free_all();
	intern_reset();
	ail_pos_line = ail_pos_col = 0;
	ail_std_init();
}

void ail_heap_free_all(void)
{
	for (int i = 0; i < MAX_GROW; i++) {
		free(grow_blocks[i].p);
		grow_blocks[i].p = NULL;
		grow_blocks[i].size = 0;
	}
	while (chunks) {
		struct chunk *n = chunks->next;
		free(chunks);
		chunks = n;
	}
	heap_used = 0;
}

char *ail_strndup(const char *s, size_t n)
{
	char *p = ail_alloc(n + 1);
	if (n)
		memcpy(p, s, n);
	p[n] = 0;
	return p;
}

void buf_put(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t nc = b->cap ? b->cap : 64;
		while (nc < b->len + n + 1) {
			if (nc > ((size_t)1 << 40))
				ail_fail("RT_HEAP", 0, 0, "string too large");
			nc *= 2;
		}
		char *np = ail_alloc(nc);
		if (b->len)
			memcpy(np, b->p, b->len);
		b->p = np;
		b->cap = nc;
	}
	if (n)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}
void buf_putc(struct buf *b, char c) { buf_put(b, &c, 1); }
void buf_puts(struct buf *b, const char *s) { buf_put(b, s, strlen(s)); }

/* ---------------- errors ---------------- */

struct ail_errctx ail_err;
int ail_pos_line, ail_pos_col;
const char *ail_cur_file = "<input>";

_Noreturn void ail_fail(const char *code, int line, int col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ail_err.msg, sizeof ail_err.msg, fmt, ap);
	va_end(ap);
	/* keep the message on one line */
	for (char *p = ail_err.msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	snprintf(ail_err.code, sizeof ail_err.code, "%s", code);
	snprintf(ail_err.file, sizeof ail_err.file, "%s", ail_cur_file ? ail_cur_file : "<input>");
	if (line <= 0) {
		/* no position at hand (heap, stack): use the expression being evaluated */
		line = ail_pos_line;
		col = ail_pos_col;
	}
	ail_err.line = line > 0 ? line : 1;
	ail_err.col = col > 0 ? col : 1;
	if (!ail_err.quiet)
		fprintf(stderr, "Error: %s at %s:%d:%d: %s\n", ail_err.code, ail_err.file,
		        ail_err.line, ail_err.col, ail_err.msg);
	if (ail_err.jb)
		longjmp(*ail_err.jb, 1);
	exit(1);
}

/* ---------------- stack guard ---------------- */

static char *stack_base;
static size_t stack_limit;

void ail_stack_init(void)
{
	stack_base = __builtin_frame_address(0);
	struct rlimit rl;
	size_t size = 8u << 20;
	if (getrlimit(RLIMIT_STACK, &rl) == 0) {
		if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > ((rlim_t)1 << 30))
			size = (size_t)64 << 20; /* unlimited: the stack still grows; stay modest */
		else
			size = rl.rlim_cur;
	}
	/* keep a margin for libc and the sanitizers' own frames */
	stack_limit = size > 4 * AIL_STACK_MARGIN ? size - 2 * AIL_STACK_MARGIN : size / 2;
}

void ail_stack_check(int line, int col)
{
	char *here = __builtin_frame_address(0);
	size_t used = stack_base > here ? (size_t)(stack_base - here) : (size_t)(here - stack_base);
	if (stack_limit && used > stack_limit)
		ail_fail("RT_STACK", line, col, "recursion too deep (stack limit reached)");
}

/* ---------------- interning ---------------- */

struct ient { struct ient *next; size_t len; char s[]; };
static struct ient *itab[4096];

static const char *s_some, *s_none, *s_ok, *s_err;

static void intern_reset(void)
{
	memset(itab, 0, sizeof itab);
	s_some = s_none = s_ok = s_err = NULL;
}

const char *ail_intern(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	struct ient **slot = &itab[h & 4095];
	for (struct ient *e = *slot; e; e = e->next)
		if (e->len == n && memcmp(e->s, s, n) == 0)
			return e->s;
	struct ient *e = ail_alloc(sizeof *e + n + 1);
	e->len = n;
	memcpy(e->s, s, n);
	e->s[n] = 0;
	e->next = *slot;
	*slot = e;
	return e->s;
}

/* ---------------- values ---------------- */

value ail_unit = {.k = V_UNIT}, ail_true = {.k = V_BOOL, .u.b = 1},
      ail_false = {.k = V_BOOL, .u.b = 0}, ail_nil = {.k = V_NIL};

static value *newv(enum vkind k)
{
	value *v = ail_alloc(sizeof *v);
	v->k = k;
	return v;
}

/* small ints are shared: loop counters and indexes allocate nothing */
#define SMALL_MIN (-256)
#define SMALL_MAX 1024
static value small_ints[SMALL_MAX - SMALL_MIN + 1];
value *v_int(int64_t i)
{
	if (i >= SMALL_MIN && i <= SMALL_MAX) {
		value *v = &small_ints[i - SMALL_MIN];
		v->k = V_INT;
		v->u.i = i;
		return v;
	}
	value *v = newv(V_INT);
	v->u.i = i;
	return v;
}
value *v_float(double f) { value *v = newv(V_FLOAT); v->u.f = f; return v; }
value *v_bool(int b) { return b ? &ail_true : &ail_false; }
value *v_str(const char *s, size_t len)
{
	value *v = newv(V_STR);
	v->u.str.s = ail_strndup(s, len);
	v->u.str.len = len;
	return v;
}
value *v_str_own(const char *s, size_t len)
{
	value *v = newv(V_STR);
	v->u.str.s = s ? s : "";
	v->u.str.len = len;
	return v;
}
value *v_bytes(const char *s, size_t len)
{
	value *v = newv(V_BYTES);
	v->u.str.s = s ? s : "";
	v->u.str.len = len;
	return v;
}
value *v_cons(value *h, value *t)
{
	value *v = newv(V_CONS);
	v->u.cons.head = h;
	v->u.cons.tail = t;
	return v;
}
value *v_ctor(const char *name, int n, value **args)
{
	value *v = newv(V_CTOR);
	v->u.agg.cname = name;
	v->u.agg.n = n;
	v->u.agg.items = args;
	return v;
}
value *v_ctor1(const char *name, value *a)
{
	value **args = ail_alloc(sizeof *args);
	args[0] = a;
	return v_ctor(name, 1, args);
}
value *v_record(int n, const char **names, value **vals)
{
	value *v = newv(V_RECORD);
	v->u.agg.n = n;
	v->u.agg.names = names;
	v->u.agg.items = vals;
	return v;
}
value *v_tuple(int n, value **items)
{
	value *v = newv(V_TUPLE);
	v->u.agg.n = n;
	v->u.agg.items = items;
	return v;
}
static void names_init(void)
{
	if (!s_some) {
		s_some = ail_intern("Some", 4);
		s_none = ail_intern("None", 4);
		s_ok = ail_intern("Ok", 2);
		s_err = ail_intern("Err", 3);
	}
}
value *v_some(value *x) { names_init(); return v_ctor1(s_some, x); }
value *v_none(void) { names_init(); return v_ctor(s_none, 0, NULL); }
value *v_ok(value *x) { names_init(); return v_ctor1(s_ok, x); }
value *v_err(value *x) { names_init(); return v_ctor1(s_err, x); }

const char *v_kind_name(value *v)
{
	switch (v->k) {
	case V_UNIT: return "unit";
	case V_BOOL: return "bool";
	case V_INT: return "int";
	case V_FLOAT: return "float";
	case V_STR: return "string";
	case V_NIL: case V_CONS: return "list";
	case V_TUPLE: return "tuple";
	case V_RECORD: return "record";
	case V_CTOR: return v->u.agg.cname;
	case V_BYTES: return "bytes";
	default: return "function";
	}
}

long v_list_length(value *v)
{
	long n = 0;
	while (v->k == V_CONS) {
		n++;
		v = v->u.cons.tail;
	}
	return n;
}

static int is_fn(value *v)
{
	return v->k == V_CLOSURE || v->k == V_FUNC || v->k == V_BUILTIN || v->k == V_CTORFN;
}

static _Noreturn void type_mismatch(const char *what, value *a, value *b, int line, int col)
{
	ail_fail("RT_TYPE", line, col, "cannot %s %s and %s", what, v_kind_name(a), v_kind_name(b));
}

int v_equal(value *a, value *b, int line, int col)
{
	for (;;) {
		ail_stack_check(line, col);
		if (is_fn(a) || is_fn(b))
			ail_fail("RT_TYPE", line, col, "cannot compare functions for equality");
		int la = (a->k == V_NIL || a->k == V_CONS), lb = (b->k == V_NIL || b->k == V_CONS);
		if (la && lb) {
			/* iterate along the spine so long lists do not recurse */
			while (a->k == V_CONS && b->k == V_CONS) {
				if (!v_equal(a->u.cons.head, b->u.cons.head, line, col))
					return 0;
				a = a->u.cons.tail;
				b = b->u.cons.tail;
			}
			return a->k == b->k;
		}
		if (a->k == V_CTOR && b->k == V_CTOR) {
			if (a->u.agg.cname != b->u.agg.cname || a->u.agg.n != b->u.agg.n)
				return 0;
			for (int i = 0; i < a->u.agg.n; i++)
				if (!v_equal(a->u.agg.items[i], b->u.agg.items[i], line, col))
					return 0;
			return 1;
		}
		/* Json numbers hold an int or a float: compare them by value */
		if (a->k == V_INT && b->k == V_FLOAT)
			return (double)a->u.i == b->u.f;
		if (a->k == V_FLOAT && b->k == V_INT)
			return a->u.f == (double)b->u.i;
		if (a->k != b->k)
			type_mismatch("compare", a, b, line, col);
		switch (a->k) {
		case V_UNIT: return 1;
		case V_BOOL: return a->u.b == b->u.b;
		case V_INT: return a->u.i == b->u.i;
		case V_FLOAT: return a->u.f == b->u.f;
		case V_STR:
		case V_BYTES:
			return a->u.str.len == b->u.str.len &&
			       (a->u.str.len == 0 || memcmp(a->u.str.s, b->u.str.s, a->u.str.len) == 0);
		case V_TUPLE:
			if (a->u.agg.n != b->u.agg.n)
				type_mismatch("compare", a, b, line, col);
			for (int i = 0; i < a->u.agg.n; i++)
				if (!v_equal(a->u.agg.items[i], b->u.agg.items[i], line, col))
					return 0;
			return 1;
		case V_RECORD:
			if (a->u.agg.n != b->u.agg.n)
				return 0;
			for (int i = 0; i < a->u.agg.n; i++) {
				int found = 0;
				for (int j = 0; j < b->u.agg.n; j++)
					if (a->u.agg.names[i] == b->u.agg.names[j]) {
						if (!v_equal(a->u.agg.items[i], b->u.agg.items[j], line, col))
							return 0;
						found = 1;
						break;
					}
				if (!found)
					return 0;
			}
			return 1;
		default:
			return 0;
		}
	}
}

int v_compare(value *a, value *b, int line, int col)
{
	if (a->k != b->k)
		type_mismatch("order", a, b, line, col);
	switch (a->k) {
	case V_INT: return a->u.i < b->u.i ? -1 : a->u.i > b->u.i;
	case V_FLOAT: return a->u.f < b->u.f ? -1 : a->u.f > b->u.f;
	case V_STR: {
		size_t n = a->u.str.len < b->u.str.len ? a->u.str.len : b->u.str.len;
		int c = n ? memcmp(a->u.str.s, b->u.str.s, n) : 0;
		if (c)
			return c < 0 ? -1 : 1;
		return a->u.str.len < b->u.str.len ? -1 : a->u.str.len > b->u.str.len;
	}
	case V_BOOL: return a->u.b - b->u.b;
	default:
		ail_fail("RT_TYPE", line, col, "cannot order values of type %s", v_kind_name(a));
	}
}

/* ---------------- show ---------------- */

void v_show(struct buf *b, value *v, int top)
{
	char tmp[64];
	ail_stack_check(0, 0);
	switch (v->k) {
	case V_UNIT: buf_puts(b, "()"); break;
	case V_BOOL: buf_puts(b, v->u.b ? "true" : "false"); break;
	case V_INT: snprintf(tmp, sizeof tmp, "%lld", (long long)v->u.i); buf_puts(b, tmp); break;
	case V_FLOAT: {
		size_t st = b->len;
		ail_num_format(b, v->u.f);
		/* a float always shows as one: 3 -> 3.0 */
		int dot = 0;
		for (size_t i = st; i < b->len; i++)
			if (b->p[i] == '.' || b->p[i] == 'e' || b->p[i] == 'n' || b->p[i] == 'I')
				dot = 1;
		if (!dot)
			buf_puts(b, ".0");
		break;
	}
	case V_STR:
		if (top)
			buf_put(b, v->u.str.s, v->u.str.len);
		else
			ail_json_quote(b, v->u.str.s, v->u.str.len);
		break;
	case V_NIL: case V_CONS:
		buf_putc(b, '[');
		for (value *p = v; p->k == V_CONS; p = p->u.cons.tail) {
			if (p != v)
				buf_puts(b, ", ");
			v_show(b, p->u.cons.head, 0);
		}
		buf_putc(b, ']');
		break;
	case V_TUPLE:
		buf_putc(b, '(');
		for (int i = 0; i < v->u.agg.n; i++) {
			if (i)
				buf_puts(b, ", ");
			v_show(b, v->u.agg.items[i], 0);
		}
		buf_putc(b, ')');
		break;
	case V_RECORD:
		buf_putc(b, '{');
		for (int i = 0; i < v->u.agg.n; i++) {
			if (i)
				buf_puts(b, ", ");
			buf_puts(b, v->u.agg.names[i]);
			buf_puts(b, ": ");
			v_show(b, v->u.agg.items[i], 0);
		}
		buf_putc(b, '}');
		break;
	case V_CTOR:
		buf_puts(b, v->u.agg.cname);
		if (v->u.agg.n) {
			buf_putc(b, '(');
			for (int i = 0; i < v->u.agg.n; i++) {
				if (i)
					buf_puts(b, ", ");
				v_show(b, v->u.agg.items[i], 0);
			}
			buf_putc(b, ')');
		}
		break;
	case V_BYTES:
		/* the byte count, never the bytes: they need not be text */
		snprintf(tmp, sizeof tmp, "<bytes %zu>", v->u.str.len);
		buf_puts(b, tmp);
		break;
	default:
		buf_puts(b, "<function>");
	}
}
