/* interp/eval.c: loading, static checks and evaluation for ailang-lite.
 *
 * Owns: module/path agreement (MOD010), import resolution against the
 * built-in std modules (LDR001 for anything else), the global name table,
 * the static checker (undefined names and constructors, call arity), and
 * the tree-walking evaluator with pattern matching. Calls in tail position
 * loop inside ail_eval instead of recursing, so tail-recursive AILANG
 * functions run in constant C stack; other recursion is bounded by the
 * stack guard (RT_STACK). */
#include "interp/ail.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct program *prog;

/* ---------------- globals ---------------- */

static size_t name_hash(const char *name, int cap)
{
	/* names are interned: the pointer identifies them */
	uintptr_t h = (uintptr_t)name;
	h ^= h >> 17;
	h *= 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 7) & (size_t)(cap - 1);
}

struct glob *ail_glob_find(struct program *p, const char *name)
{
	if (!p->gindex_cap)
		return NULL;
	for (size_t i = name_hash(name, p->gindex_cap);; i = (i + 1) & (size_t)(p->gindex_cap - 1)) {
		int gi = p->gindex[i];
		if (gi == 0)
			return NULL;
		if (p->globs[gi - 1].name == name)
			return &p->globs[gi - 1];
	}
}

static void gindex_put(struct program *p, int gi)
{
	size_t i = name_hash(p->globs[gi].name, p->gindex_cap);
	while (p->gindex[i])
		i = (i + 1) & (size_t)(p->gindex_cap - 1);
	p->gindex[i] = gi + 1;
}

static struct glob *glob_add(struct program *p, const char *name, int line, int col)
{
	if (ail_glob_find(p, name))
		ail_fail("TC_DUPLICATE_001", line, col, "'%s' is defined more than once", name);
	if (p->nglob == p->capglob) {
		int nc = p->capglob ? p->capglob * 2 : 32;
		struct glob *ng = ail_alloc((size_t)nc * sizeof *ng);
		if (p->nglob)
			memcpy(ng, p->globs, (size_t)p->nglob * sizeof *ng);
		p->globs = ng;
		p->capglob = nc;
	}
	struct glob *g = &p->globs[p->nglob++];
	memset(g, 0, sizeof *g);
	g->name = name;
	if (2 * p->nglob > p->gindex_cap) {
		/* keep the table at most half full */
		int nc = p->gindex_cap ? p->gindex_cap * 2 : 64;
		while (2 * p->nglob > nc)
			nc *= 2;
		p->gindex = ail_alloc((size_t)nc * sizeof *p->gindex);
		p->gindex_cap = nc;
		for (int i = 0; i < p->nglob; i++)
			gindex_put(p, i);
	} else {
		gindex_put(p, p->nglob - 1);
	}
	return g;
}

int ail_ctor_arity(struct program *p, const char *name)
{
	for (int i = 0; i < p->nctor; i++)
		if (p->ctors[i].name == name)
			return p->ctors[i].arity;
	return ail_builtin_ctor_arity(name);
}

/* ---------------- module path (MOD010) ---------------- */

static void check_module_path(struct module *m, const char *file)
{
	/* expected name: the file path relative to the working directory,
	 * without the .ail extension */
	char rel[4096];
	const char *f = file;
	if (f[0] == '/') {
		char cwd[4096];
		if (getcwd(cwd, sizeof cwd)) {
			size_t cl = strlen(cwd);
			if (strncmp(f, cwd, cl) == 0 && f[cl] == '/')
				f += cl + 1;
			else if (cl == 1 && cwd[0] == '/')
				f += 1;
		}
	}
	while (f[0] == '.' && f[1] == '/') {
		f += 2;
		while (*f == '/')
			f++;
	}
	snprintf(rel, sizeof rel, "%s", f);
	size_t rl = strlen(rel);
	if (rl > 4 && strcmp(rel + rl - 4, ".ail") == 0)
		rel[rl - 4] = 0;
	if (strcmp(rel, m->name) != 0)
		ail_fail("MOD010", m->name_line, m->name_col,
		         "module name '%s' does not match its file path '%s' (expected 'module %s')",
		         m->name, rel, rel);
}

/* ---------------- load ---------------- */

static int is_type_name(const char *mod, const char *name)
{
	if (strcmp(mod, "std/json") == 0)
		return strcmp(name, "Json") == 0;
	if (strcmp(mod, "std/option") == 0)
		return strcmp(name, "Option") == 0;
	if (strcmp(mod, "std/result") == 0)
		return strcmp(name, "Result") == 0;
	return 0;
}

static int ctor_in_module(const char *mod, const char *name)
{
	static const char *json[] = {"JNull", "JBool", "JNumber", "JString", "JArray", "JObject", NULL};
	static const char *opt[] = {"Some", "None", NULL};
	static const char *res[] = {"Ok", "Err", NULL};
	const char **l = strcmp(mod, "std/json") == 0 ? json : strcmp(mod, "std/option") == 0 ? opt
	                 : strcmp(mod, "std/result") == 0 ? res : NULL;
	for (int i = 0; l && l[i]; i++)
		if (strcmp(l[i], name) == 0)
			return 1;
	return 0;
}

struct program *ail_load(const char *file, const char *src, size_t n, int check_modpath)
{
	struct program *p = ail_alloc(sizeof *p);
	struct module *m = ail_parse(file, src, n);
	p->mod = m;
	if (check_modpath && m->has_name)
		check_module_path(m, file);
	for (int i = 0; i < m->nfuncs; i++) {
		struct glob *g = glob_add(p, m->funcs[i]->name, m->funcs[i]->line, m->funcs[i]->col);
		g->fn = m->funcs[i];
		g->val = ail_alloc(sizeof *g->val);
		g->val->k = V_FUNC;
		g->val->u.fn = m->funcs[i];
	}
	/* show is in the prelude, like upstream */
	const struct builtin *sh = ail_builtin_find("prelude", "show");
	if (!ail_glob_find(p, ail_intern("show", 4))) {
		struct glob *g = glob_add(p, ail_intern("show", 4), 0, 0);
		g->bi = sh;
	}
	for (int i = 0; i < m->nimports; i++) {
		struct import *im = &m->imports[i];
		if (!ail_std_module_known(im->path))
			ail_fail("LDR001", im->line, im->col, "LDR001: module not found: %s", im->path);
		if (im->nitems == 0) {
			/* import every function of the module that is not already defined */
			for (int id = 0; ail_builtin_get(id); id++) {
				const struct builtin *b = ail_builtin_get(id);
				if (strcmp(b->module, im->path) != 0)
					continue;
				const char *nm = ail_intern(b->name, strlen(b->name));
				if (ail_glob_find(p, nm))
					continue;
				glob_add(p, nm, im->line, im->col)->bi = b;
			}
			continue;
		}
		for (int j = 0; j < im->nitems; j++) {
			struct import_item *it = &im->items[j];
			const struct builtin *b = ail_builtin_find(im->path, it->name);
			if (b) {
				struct glob *prev = ail_glob_find(p, it->alias);
				if (prev && prev->bi == b)
					continue; /* imported twice: harmless */
				glob_add(p, it->alias, it->line, it->col)->bi = b;
			} else if (is_type_name(im->path, it->name)) {
				/* types are checked dynamically */
			} else if (ctor_in_module(im->path, it->name)) {
				if (it->alias != it->name)
					ail_fail("LDR002", it->line, it->col, "constructor '%s' cannot be renamed", it->name);
			} else {
				ail_fail("LDR002", it->line, it->col, "module %s has no export '%s'", im->path, it->name);
			}
		}
	}
	p->ctors = m->ctors;
	p->nctor = m->nctors;
	for (int i = 0; i < m->nctors; i++)
		for (int j = 0; j < i; j++)
			if (m->ctors[j].name == m->ctors[i].name)
				ail_fail("TC_DUPLICATE_001", m->ctors[i].line, m->ctors[i].col,
				         "constructor '%s' is defined more than once", m->ctors[i].name);
	prog = p;
	return p;
}

/* ---------------- static checks ---------------- */

struct scope { const char *name; struct scope *next; };

static int in_scope(struct scope *s, const char *name)
{
	for (; s; s = s->next)
		if (s->name == name)
			return 1;
	return 0;
}

static struct scope *bind(struct scope *s, const char *name)
{
	struct scope *n = ail_alloc(sizeof *n);
	n->name = name;
	n->next = s;
	return n;
}

static struct scope *check_pat(struct program *p, pat *pt, struct scope *s)
{
	ail_stack_check(pt->line, pt->col);
	switch (pt->k) {
	case P_VAR:
		return bind(s, pt->name);
	case P_CTOR: {
		int ar = ail_ctor_arity(p, pt->name);
		if (ar < 0)
			ail_fail("TC_UNDEFINED_002", pt->line, pt->col, "unknown constructor '%s'", pt->name);
		if (ar != pt->nkids)
			ail_fail("TC_ARITY_001", pt->line, pt->col,
			         "constructor '%s' takes %d argument%s, the pattern gives %d", pt->name, ar,
			         ar == 1 ? "" : "s", pt->nkids);
		break;
	}
	default:
		break;
	}
	for (int i = 0; i < pt->nkids; i++)
		s = check_pat(p, pt->kids[i], s);
	if (pt->rest)
		s = check_pat(p, pt->rest, s);
	return s;
}

static int call_arity_ok(int arity, node *call)
{
	int nargs = call->nkids - 1;
	if (nargs == arity)
		return 1;
	/* f(()) calls a function of no parameters */
	return arity == 0 && nargs == 1 && call->kids[1]->k == N_UNIT;
}

static void check_expr(struct program *p, node *e, struct scope *s)
{
	ail_stack_check(e->line, e->col);
	switch (e->k) {
	case N_VAR:
		if (in_scope(s, e->name))
			return;
		{
			struct glob *g = ail_glob_find(p, e->name);
			if (!g)
				ail_fail("TC_UNDEFINED_001", e->line, e->col, "undefined name '%s'", e->name);
			e->cache = g;
		}
		return;
	case N_CTOR:
		if (ail_ctor_arity(p, e->name) < 0)
			ail_fail("TC_UNDEFINED_002", e->line, e->col, "unknown constructor '%s'", e->name);
		return;
	case N_CALL: {
		node *f = e->kids[0];
		if (f->k == N_VAR && !in_scope(s, f->name)) {
			struct glob *g = ail_glob_find(p, f->name);
			if (g) {
				int ar = g->fn ? g->fn->nparams : g->bi->arity;
				if (!call_arity_ok(ar, e))
					ail_fail("TC_ARITY_001", e->line, e->col,
					         "function '%s' takes %d argument%s, called with %d", f->name, ar,
					         ar == 1 ? "" : "s", e->nkids - 1);
			}
		} else if (f->k == N_CTOR) {
			int ar = ail_ctor_arity(p, f->name);
			if (ar >= 0 && ar != e->nkids - 1)
				ail_fail("TC_ARITY_001", e->line, e->col,
				         "constructor '%s' takes %d argument%s, called with %d", f->name, ar,
				         ar == 1 ? "" : "s", e->nkids - 1);
		} else if (f->k == N_LAMBDA && f->npats != e->nkids - 1) {
			ail_fail("TC_ARITY_001", e->line, e->col, "lambda takes %d argument%s, called with %d",
			         f->npats, f->npats == 1 ? "" : "s", e->nkids - 1);
		}
		for (int i = 0; i < e->nkids; i++)
			check_expr(p, e->kids[i], s);
		return;
	}
	case N_LAMBDA: {
		struct scope *in = s;
		for (int i = 0; i < e->npats; i++)
			in = bind(in, e->names[i]);
		check_expr(p, e->kids[0], in);
		return;
	}
	case N_LET: {
		check_expr(p, e->kids[0], s);
		/* a let binding is visible in its own value only through recursion
		 * of functions, which ailang-lite does not allow for lets */
		struct scope *in = check_pat(p, e->pats[0], s);
		if (e->kids[1])
			check_expr(p, e->kids[1], in);
		return;
	}
	case N_MATCH:
		check_expr(p, e->kids[0], s);
		for (int i = 0; i < e->npats; i++) {
			struct scope *in = check_pat(p, e->pats[i], s);
			if (e->guards[i])
				check_expr(p, e->guards[i], in);
			check_expr(p, e->kids[i + 1], in);
		}
		return;
	default:
		for (int i = 0; i < e->nkids; i++)
			if (e->kids[i])
				check_expr(p, e->kids[i], s);
		return;
	}
}

void ail_check(struct program *p)
{
	struct module *m = p->mod;
	for (int i = 0; i < m->nfuncs; i++) {
		struct func *f = m->funcs[i];
		struct scope *s = NULL;
		for (int j = 0; j < f->nparams; j++)
			s = bind(s, f->params[j].name);
		for (int j = 0; j < f->nrequires; j++)
			check_expr(p, f->requires_[j], s);
		struct scope *rs = bind(s, ail_intern("result", 6));
		for (int j = 0; j < f->nensures; j++)
			check_expr(p, f->ensures_[j], rs);
		check_expr(p, f->body, s);
		for (int j = 0; j < f->ntests; j++) {
			check_expr(p, f->tests[j].input, NULL);
			check_expr(p, f->tests[j].expected, NULL);
		}
	}
}

/* ---------------- evaluation ---------------- */

void ail_eval_init(struct program *p) { prog = p; }

static env *env_bind(env *next, const char *name, value *v)
{
	env *e = ail_alloc(sizeof *e);
	e->name = name;
	e->val = v;
	e->next = next;
	return e;
}

/* Match v against pt; on success extend *en and return 1. */
static int match(pat *pt, value *v, env **en)
{
	ail_stack_check(pt->line, pt->col);
	switch (pt->k) {
	case P_WILD: return 1;
	case P_VAR: *en = env_bind(*en, pt->name, v); return 1;
	case P_INT: return v->k == V_INT && v->u.i == pt->ival;
	case P_FLOAT: return v->k == V_FLOAT && v->u.f == pt->fval;
	case P_STR:
		return v->k == V_STR && v->u.str.len == pt->len && memcmp(v->u.str.s, pt->name, pt->len) == 0;
	case P_BOOL: return v->k == V_BOOL && v->u.b == (int)pt->ival;
	case P_UNIT: return v->k == V_UNIT;
	case P_CTOR:
		if (v->k != V_CTOR || v->u.agg.cname != pt->name || v->u.agg.n != pt->nkids)
			return 0;
		for (int i = 0; i < pt->nkids; i++)
			if (!match(pt->kids[i], v->u.agg.items[i], en))
				return 0;
		return 1;
	case P_TUPLE:
		if (v->k != V_TUPLE || v->u.agg.n != pt->nkids)
			return 0;
		for (int i = 0; i < pt->nkids; i++)
			if (!match(pt->kids[i], v->u.agg.items[i], en))
				return 0;
		return 1;
	case P_LIST: {
		if (v->k != V_NIL && v->k != V_CONS)
			return 0;
		value *c = v;
		for (int i = 0; i < pt->nkids; i++) {
			if (c->k != V_CONS)
				return 0;
			if (!match(pt->kids[i], c->u.cons.head, en))
				return 0;
			c = c->u.cons.tail;
		}
		if (pt->has_rest)
			return pt->rest ? match(pt->rest, c, en) : 1;
		return c->k == V_NIL;
	}
	case P_CONS:
		if (v->k != V_CONS)
			return 0;
		return match(pt->kids[0], v->u.cons.head, en) && match(pt->kids[1], v->u.cons.tail, en);
	case P_RECORD:
		if (v->k != V_RECORD)
			return 0;
		for (int i = 0; i < pt->nkids; i++) {
			int found = 0;
			for (int j = 0; j < v->u.agg.n; j++)
				if (v->u.agg.names[j] == pt->names[i]) {
					if (!match(pt->kids[i], v->u.agg.items[j], en))
						return 0;
					found = 1;
					break;
				}
			if (!found)
				return 0;
		}
		return 1;
	}
	return 0;
}

static int truth(value *v, node *e)
{
	if (v->k != V_BOOL)
		ail_fail("RT_TYPE", e->line, e->col, "expected a bool, got %s", v_kind_name(v));
	return v->u.b;
}

static value *arith(int op, value *a, value *b, node *e)
{
	if (a->k == V_INT && b->k == V_INT) {
		int64_t x = a->u.i, y = b->u.i, r;
		switch (op) {
		case T_PLUS:
			if (__builtin_add_overflow(x, y, &r))
				ail_fail("RT_OVERFLOW", e->line, e->col, "integer overflow in +");
			return v_int(r);
		case T_MINUS:
			if (__builtin_sub_overflow(x, y, &r))
				ail_fail("RT_OVERFLOW", e->line, e->col, "integer overflow in -");
			return v_int(r);
		case T_STAR:
			if (__builtin_mul_overflow(x, y, &r))
				ail_fail("RT_OVERFLOW", e->line, e->col, "integer overflow in *");
			return v_int(r);
		case T_SLASH: case T_PERCENT:
			if (y == 0)
				ail_fail("RT_DIV_ZERO", e->line, e->col, "integer division by zero");
			if (x == INT64_MIN && y == -1)
				ail_fail("RT_OVERFLOW", e->line, e->col, "integer overflow in %s", op == T_SLASH ? "/" : "%");
			return v_int(op == T_SLASH ? x / y : x % y);
		}
	}
	if (a->k == V_FLOAT && b->k == V_FLOAT) {
		double x = a->u.f, y = b->u.f;
		switch (op) {
		case T_PLUS: return v_float(x + y);
		case T_MINUS: return v_float(x - y);
		case T_STAR: return v_float(x * y);
		case T_SLASH: return v_float(x / y);
		case T_PERCENT:
			ail_fail("RT_TYPE", e->line, e->col, "'%%' needs int operands");
		}
	}
	ail_fail("RT_TYPE", e->line, e->col, "operator %s cannot combine %s and %s", ail_tok_name(op),
	         v_kind_name(a), v_kind_name(b));
}

static value *concat(value *a, value *b, node *e)
{
	if (a->k == V_STR && b->k == V_STR) {
		size_t n = a->u.str.len + b->u.str.len;
		if (n < a->u.str.len || n > ((size_t)1 << 40))
			ail_fail("RT_HEAP", e->line, e->col, "string too large");
		if (b->u.str.len == 0)
			return a;
		struct strbuf *sb = a->u.str.sb;
		value *v;
		if (sb && a->u.str.s + a->u.str.len == sb->data + sb->used && sb->cap - sb->used >= b->u.str.len) {
			/* `acc ++ piece`: append in place, so a loop that grows a string
			 * costs linear, not quadratic, memory */
			memcpy(sb->data + sb->used, b->u.str.s, b->u.str.len);
			sb->used += b->u.str.len;
			v = v_str_own(a->u.str.s, n);
		} else {
			size_t cap = n < 32 ? 64 : 2 * n;
			sb = ail_alloc(sizeof *sb + cap);
			sb->cap = cap;
			memcpy(sb->data, a->u.str.s, a->u.str.len);
			memcpy(sb->data + a->u.str.len, b->u.str.s, b->u.str.len);
			sb->used = n;
			v = v_str_own(sb->data, n);
		}
		v->u.str.sb = sb;
		return v;
	}
	int la = a->k == V_NIL || a->k == V_CONS, lb = b->k == V_NIL || b->k == V_CONS;
	if (la && lb) {
		if (b->k == V_NIL)
			return a;
		value *head = b, **tailp = &head;
		for (value *c = a; c->k == V_CONS; c = c->u.cons.tail) {
			value *n = v_cons(c->u.cons.head, b);
			*tailp = n;
			tailp = &n->u.cons.tail;
		}
		return head;
	}
	ail_fail("RT_TYPE", e->line, e->col, "'++' needs two strings or two lists, got %s and %s",
	         v_kind_name(a), v_kind_name(b));
}

static value *lookup(node *e, env *en)
{
	for (env *p = en; p; p = p->next)
		if (p->name == e->name)
			return p->val;
	struct glob *g = e->cache;
	if (!g)
		g = ail_glob_find(prog, e->name);
	if (!g)
		ail_fail("TC_UNDEFINED_001", e->line, e->col, "undefined name '%s'", e->name);
	if (!g->val) {
		g->val = ail_alloc(sizeof *g->val);
		g->val->k = V_BUILTIN;
		g->val->u.bi.id = ail_builtin_id(g->bi);
		g->val->u.bi.name = g->name;
	}
	return g->val;
}

static value *ctor_value(const char *name, node *e)
{
	int ar = ail_ctor_arity(prog, name);
	if (ar < 0)
		ail_fail("TC_UNDEFINED_002", e->line, e->col, "unknown constructor '%s'", name);
	if (ar == 0)
		return v_ctor(name, 0, NULL);
	value *v = ail_alloc(sizeof *v);
	v->k = V_CTORFN;
	v->u.agg.cname = name;
	v->u.agg.n = ar;
	return v;
}

static _Noreturn void arity_fail(const char *what, int want, int got, int line, int col)
{
	ail_fail("RT_ARITY", line, col, "%s takes %d argument%s, called with %d", what, want,
	         want == 1 ? "" : "s", got);
}

/* Evaluate e. Tail positions (if branches, match arms, let bodies, the
 * last statement, and calls of AILANG functions) loop instead of recursing. */
value *ail_eval(node *e, env *en)
{
	for (;;) {
		ail_stack_check(e->line, e->col);
		ail_pos_line = e->line;
		ail_pos_col = e->col;
		switch (e->k) {
		case N_INT: return v_int(e->ival);
		case N_FLOAT: return v_float(e->fval);
		case N_STR: return v_str_own(e->name, e->len);
		case N_BOOL: return v_bool((int)e->ival);
		case N_UNIT: return &ail_unit;
		case N_VAR: return lookup(e, en);
		case N_CTOR: return ctor_value(e->name, e);
		case N_ISTR: {
			struct buf b = {0};
			for (int i = 0; i < e->nkids; i++) {
				value *v = ail_eval(e->kids[i], en);
				if (v->k == V_STR)
					buf_put(&b, v->u.str.s, v->u.str.len);
				else
					v_show(&b, v, 1);
			}
			return v_str_own(b.p, b.len);
		}
		case N_LIST: {
			value *head = &ail_nil, **tailp = &head;
			for (int i = 0; i < e->nkids; i++) {
				value *c = v_cons(ail_eval(e->kids[i], en), &ail_nil);
				*tailp = c;
				tailp = &c->u.cons.tail;
			}
			return head;
		}
		case N_TUPLE: {
			value **items = ail_alloc((size_t)e->nkids * sizeof *items);
			for (int i = 0; i < e->nkids; i++)
				items[i] = ail_eval(e->kids[i], en);
			return v_tuple(e->nkids, items);
		}
		case N_RECORD: {
			value **items = ail_alloc((size_t)(e->nkids ? e->nkids : 1) * sizeof *items);
			for (int i = 0; i < e->nkids; i++)
				items[i] = ail_eval(e->kids[i], en);
			return v_record(e->nkids, e->names, items);
		}
		case N_RECUPD: {
			value *r = ail_eval(e->kids[0], en);
			if (r->k != V_RECORD)
				ail_fail("RT_TYPE", e->line, e->col, "record update of %s, not a record", v_kind_name(r));
			int n = r->u.agg.n;
			for (int i = 1; i < e->nkids; i++) {
				int found = 0;
				for (int j = 0; j < n; j++)
					found |= r->u.agg.names[j] == e->names[i - 1];
				if (!found)
					ail_fail("RT_FIELD", e->line, e->col, "record has no field '%s' to update", e->names[i - 1]);
			}
			value **items = ail_alloc((size_t)(n ? n : 1) * sizeof *items);
			memcpy(items, r->u.agg.items, (size_t)n * sizeof *items);
			for (int i = 1; i < e->nkids; i++) {
				value *v = ail_eval(e->kids[i], en);
				for (int j = 0; j < n; j++)
					if (r->u.agg.names[j] == e->names[i - 1])
						items[j] = v;
			}
			return v_record(n, r->u.agg.names, items);
		}
		case N_FIELD: {
			value *r = ail_eval(e->kids[0], en);
			if (r->k != V_RECORD)
				ail_fail("RT_TYPE", e->line, e->col, "field access '.%s' on %s, not a record", e->name,
				         v_kind_name(r));
			for (int i = 0; i < r->u.agg.n; i++)
				if (r->u.agg.names[i] == e->name)
					return r->u.agg.items[i];
			ail_fail("RT_FIELD", e->line, e->col, "record has no field '%s'", e->name);
		}
		case N_LAMBDA: {
			value *v = ail_alloc(sizeof *v);
			v->k = V_CLOSURE;
			v->u.clo.lam = e;
			v->u.clo.env = en;
			return v;
		}
		case N_IF:
			e = truth(ail_eval(e->kids[0], en), e->kids[0]) ? e->kids[1] : e->kids[2];
			continue;
		case N_MATCH: {
			node *m = e;
			value *v = ail_eval(m->kids[0], en);
			int i;
			for (i = 0; i < m->npats; i++) {
				env *ne = en;
				if (!match(m->pats[i], v, &ne))
					continue;
				if (m->guards[i] && !truth(ail_eval(m->guards[i], ne), m->guards[i]))
					continue;
				en = ne;
				e = m->kids[i + 1];
				break;
			}
			if (i == m->npats) {
				struct buf b = {0};
				v_show(&b, v, 0);
				int cut = b.len > 200;
				if (cut) {
					b.len = 200;
					b.p[200] = 0;
				}
				ail_fail("RT_MATCH", m->line, m->col, "no match arm matches the value %s%s", b.p,
				         cut ? "..." : "");
			}
			continue;
		}
		case N_LET: {
			value *v = ail_eval(e->kids[0], en);
			if (!match(e->pats[0], v, &en))
				ail_fail("RT_MATCH", e->line, e->col, "let pattern does not match the value");
			e = e->kids[1];
			continue;
		}
		case N_SEQ:
			ail_eval(e->kids[0], en);
			e = e->kids[1];
			continue;
		case N_NOT:
			return v_bool(!truth(ail_eval(e->kids[0], en), e->kids[0]));
		case N_NEG: {
			value *v = ail_eval(e->kids[0], en);
			if (v->k == V_INT) {
				if (v->u.i == INT64_MIN)
					ail_fail("RT_OVERFLOW", e->line, e->col, "integer overflow in unary -");
				return v_int(-v->u.i);
			}
			if (v->k == V_FLOAT)
				return v_float(-v->u.f);
			ail_fail("RT_TYPE", e->line, e->col, "unary '-' needs a number, got %s", v_kind_name(v));
		}
		case N_BINOP: {
			int op = e->op;
			value *a = ail_eval(e->kids[0], en);
			if (op == T_ANDAND) {
				if (!truth(a, e->kids[0]))
					return &ail_false;
				return v_bool(truth(ail_eval(e->kids[1], en), e->kids[1]));
			}
			if (op == T_OROR) {
				if (truth(a, e->kids[0]))
					return &ail_true;
				return v_bool(truth(ail_eval(e->kids[1], en), e->kids[1]));
			}
			value *b = ail_eval(e->kids[1], en);
			switch (op) {
			case T_EQEQ: return v_bool(v_equal(a, b, e->line, e->col));
			case T_NE: return v_bool(!v_equal(a, b, e->line, e->col));
			case T_LT: return v_bool(v_compare(a, b, e->line, e->col) < 0);
			case T_GT: return v_bool(v_compare(a, b, e->line, e->col) > 0);
			case T_LE: return v_bool(v_compare(a, b, e->line, e->col) <= 0);
			case T_GE: return v_bool(v_compare(a, b, e->line, e->col) >= 0);
			case T_PLUSPLUS: return concat(a, b, e);
			case T_CONS:
				if (b->k != V_NIL && b->k != V_CONS)
					ail_fail("RT_TYPE", e->line, e->col, "'::' needs a list on the right, got %s",
					         v_kind_name(b));
				return v_cons(a, b);
			default: return arith(op, a, b, e);
			}
		}
		case N_CALL: {
			value *f = ail_eval(e->kids[0], en);
			int n = e->nkids - 1;
			if (f->k == V_FUNC || f->k == V_CLOSURE) {
				/* bind the arguments straight into the callee's environment
				 * and continue with its body: no C recursion, no args array */
				int np = f->k == V_FUNC ? f->u.fn->nparams : f->u.clo.lam->npats;
				if (n == 1 && np == 0) {
					if (ail_eval(e->kids[1], en)->k != V_UNIT)
						arity_fail(f->k == V_FUNC ? f->u.fn->name : "lambda", 0, 1, e->line, e->col);
					n = 0;
				}
				if (n != np)
					arity_fail(f->k == V_FUNC ? f->u.fn->name : "lambda", np, n, e->line, e->col);
				env *ne = f->k == V_FUNC ? NULL : f->u.clo.env;
				for (int i = 0; i < n; i++) {
					const char *pn = f->k == V_FUNC ? f->u.fn->params[i].name : f->u.clo.lam->names[i];
					ne = env_bind(ne, pn, ail_eval(e->kids[i + 1], en));
				}
				en = ne;
				e = f->k == V_FUNC ? f->u.fn->body : f->u.clo.lam->kids[0];
				continue;
			}
			value **args = ail_alloc((size_t)(n ? n : 1) * sizeof *args);
			for (int i = 0; i < n; i++)
				args[i] = ail_eval(e->kids[i + 1], en);
			return ail_call(f, n, args, e->line, e->col);
		}
		}
		ail_fail("RT_INTERNAL", e->line, e->col, "unknown expression kind %d", (int)e->k);
	}
}

value *ail_call_func(struct func *fn, int n, value **args, int line, int col)
{
	if (n != fn->nparams)
		arity_fail(fn->name, fn->nparams, n, line, col);
	env *ne = NULL;
	for (int i = 0; i < n; i++)
		ne = env_bind(ne, fn->params[i].name, args[i]);
	return ail_eval(fn->body, ne);
}

value *ail_call(value *f, int n, value **args, int line, int col)
{
	ail_stack_check(line, col);
	switch (f->k) {
	case V_FUNC: {
		if (n == 1 && f->u.fn->nparams == 0 && args[0]->k == V_UNIT)
			n = 0;
		return ail_call_func(f->u.fn, n, args, line, col);
	}
	case V_CLOSURE: {
		node *lam = f->u.clo.lam;
		if (n != lam->npats)
			arity_fail("lambda", lam->npats, n, line, col);
		env *ne = f->u.clo.env;
		for (int i = 0; i < n; i++)
			ne = env_bind(ne, lam->names[i], args[i]);
		return ail_eval(lam->kids[0], ne);
	}
	case V_BUILTIN: {
		const struct builtin *b = ail_builtin_get(f->u.bi.id);
		if (n == 1 && b->arity == 0 && args[0]->k == V_UNIT)
			n = 0;
		if (n != b->arity)
			arity_fail(b->name, b->arity, n, line, col);
		return b->fn(args, line, col);
	}
	case V_CTORFN: {
		if (n != f->u.agg.n)
			arity_fail(f->u.agg.cname, f->u.agg.n, n, line, col);
		value **copy = ail_alloc((size_t)n * sizeof *copy);
		memcpy(copy, args, (size_t)n * sizeof *copy);
		return v_ctor(f->u.agg.cname, n, copy);
	}
	case V_CTOR:
		if (f->u.agg.n == 0)
			ail_fail("TC_ARITY_001", line, col, "constructor '%s' takes no arguments", f->u.agg.cname);
		/* fallthrough */
	default:
		ail_fail("RT_TYPE", line, col, "cannot call a value of type %s", v_kind_name(f));
	}
}
