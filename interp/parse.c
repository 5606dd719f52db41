/* interp/parse.c: the recursive-descent parser of ailang-lite.
 *
 * Owns: turning the token array into a struct module (module name,
 * imports, functions with their contracts and inline tests, ADT
 * constructors) and expression / pattern trees. Types and effect rows are
 * parsed and dropped: ailang-lite checks types dynamically. Every
 * recursive rule counts its depth, so a pathological source ends in
 * PAR_NESTING_TOO_DEEP instead of overflowing the C stack. */
#include "interp/ail.h"
#include <string.h>

struct parser {
	struct token *t;
	size_t n, i;
	int depth;
};

static struct token *peek(struct parser *P) { return &P->t[P->i]; }
static struct token *peekn(struct parser *P, size_t k)
{
	return P->i + k < P->n ? &P->t[P->i + k] : &P->t[P->n - 1];
}
static struct token *next(struct parser *P)
{
	struct token *k = &P->t[P->i];
	if (k->t != T_EOF)
		P->i++;
	return k;
}
static int at(struct parser *P, enum tok t) { return peek(P)->t == t; }
static int accept(struct parser *P, enum tok t)
{
	if (at(P, t)) {
		next(P);
		return 1;
	}
	return 0;
}

static _Noreturn void unexpected(struct parser *P, const char *wanted)
{
	struct token *k = peek(P);
	if (k->t == T_IDENT || k->t == T_UIDENT)
		ail_fail("PAR_UNEXPECTED_TOKEN", k->line, k->col, "expected %s, found '%s'", wanted, k->text);
	ail_fail("PAR_UNEXPECTED_TOKEN", k->line, k->col, "expected %s, found %s", wanted, ail_tok_name(k->t));
}

static struct token *expect(struct parser *P, enum tok t, const char *wanted)
{
	if (!at(P, t))
		unexpected(P, wanted);
	return next(P);
}

static void enter(struct parser *P)
{
	if (++P->depth > AIL_MAX_NEST) {
		struct token *k = peek(P);
		ail_fail("PAR_NESTING_TOO_DEEP", k->line, k->col, "source nested too deeply (limit %d)", AIL_MAX_NEST);
	}
}
static void leave(struct parser *P) { P->depth--; }

/* growable pointer arrays in the arena */
struct vec { void **p; int n, cap; };
static void vpush(struct vec *v, void *x)
{
	if (v->n == v->cap) {
		int nc = v->cap ? v->cap * 2 : 4;
		void **np = ail_alloc((size_t)nc * sizeof *np);
		if (v->n)
			memcpy(np, v->p, (size_t)v->n * sizeof *np);
		v->p = np;
		v->cap = nc;
	}
	v->p[v->n++] = x;
}

static node *mk(enum nkind k, struct token *at_)
{
	node *e = ail_alloc(sizeof *e);
	e->k = k;
	e->line = at_->line;
	e->col = at_->col;
	return e;
}

static pat *mkp(enum pkind k, struct token *at_)
{
	pat *p = ail_alloc(sizeof *p);
	p->k = k;
	p->line = at_->line;
	p->col = at_->col;
	return p;
}

/* ---------------- types (parsed, then dropped) ---------------- */

static void parse_type(struct parser *P);

static void parse_effects(struct parser *P)
{
	/* `! {IO, FS}` */
	expect(P, T_LBRACE, "'{' after '!'");
	while (!at(P, T_RBRACE)) {
		if (!at(P, T_IDENT) && !at(P, T_UIDENT))
			unexpected(P, "an effect name");
		next(P);
		if (!accept(P, T_COMMA))
			break;
	}
	expect(P, T_RBRACE, "'}' closing the effect row");
}

static void parse_type_atom(struct parser *P)
{
	enter(P);
	struct token *k = peek(P);
	if (k->t == T_IDENT || k->t == T_UIDENT) {
		next(P);
		while (accept(P, T_DOT))
			if (!accept(P, T_IDENT) && !accept(P, T_UIDENT))
				unexpected(P, "a type name");
		if (accept(P, T_LBRACK)) {
			do {
				parse_type(P);
			} while (accept(P, T_COMMA));
			expect(P, T_RBRACK, "']' closing the type arguments");
		}
	} else if (accept(P, T_LBRACK)) {
		parse_type(P);
		expect(P, T_RBRACK, "']' closing the list type");
	} else if (accept(P, T_LBRACE)) {
		while (!at(P, T_RBRACE)) {
			if (accept(P, T_PIPE)) {
				expect(P, T_IDENT, "a row variable");
				break;
			}
			if (!at(P, T_IDENT) && !at(P, T_UIDENT))
				unexpected(P, "a field name");
			next(P);
			expect(P, T_COLON, "':' after the field name");
			parse_type(P);
			if (!accept(P, T_COMMA))
				break;
		}
		expect(P, T_RBRACE, "'}' closing the record type");
	} else if (accept(P, T_LPAREN)) {
		while (!at(P, T_RPAREN)) {
			parse_type(P);
			if (!accept(P, T_COMMA))
				break;
		}
		expect(P, T_RPAREN, "')' closing the type");
	} else {
		unexpected(P, "a type");
	}
	leave(P);
}

static void parse_type(struct parser *P)
{
	enter(P);
	parse_type_atom(P);
	if (accept(P, T_ARROW)) {
		parse_type(P);
	}
	if (at(P, T_BANG) && peekn(P, 1)->t == T_LBRACE) {
		next(P);
		parse_effects(P);
	}
	leave(P);
}

/* ---------------- patterns ---------------- */

static pat *parse_pattern(struct parser *P);

static pat *parse_pat_atom(struct parser *P)
{
	enter(P);
	struct token *k = peek(P);
	pat *p = NULL;
	switch (k->t) {
	case T_IDENT:
		next(P);
		if (k->len == 1 && k->text[0] == '_') {
			p = mkp(P_WILD, k);
		} else {
			p = mkp(P_VAR, k);
			p->name = k->text;
		}
		break;
	case T_INT:
		next(P);
		if (k->len)
			ail_fail("PAR_BAD_NUMBER", k->line, k->col, "integer literal out of range");
		p = mkp(P_INT, k);
		p->ival = k->ival;
		break;
	case T_FLOAT:
		next(P);
		p = mkp(P_FLOAT, k);
		p->fval = k->fval;
		break;
	case T_MINUS: {
		next(P);
		struct token *d = peek(P);
		if (d->t == T_INT) {
			next(P);
			p = mkp(P_INT, k);
			p->ival = d->len ? INT64_MIN : -d->ival;
		} else if (d->t == T_FLOAT) {
			next(P);
			p = mkp(P_FLOAT, k);
			p->fval = -d->fval;
		} else {
			unexpected(P, "a number after '-' in a pattern");
		}
		break;
	}
	case T_STR:
		next(P);
		p = mkp(P_STR, k);
		p->name = k->text;
		p->len = k->len;
		break;
	case T_TRUE: case T_FALSE:
		next(P);
		p = mkp(P_BOOL, k);
		p->ival = (k->t == T_TRUE);
		break;
	case T_UIDENT: {
		next(P);
		p = mkp(P_CTOR, k);
		p->name = k->text;
		if (accept(P, T_LPAREN)) {
			struct vec v = {0};
			while (!at(P, T_RPAREN)) {
				vpush(&v, parse_pattern(P));
				if (!accept(P, T_COMMA))
					break;
			}
			expect(P, T_RPAREN, "')' closing the constructor pattern");
			p->kids = (pat **)v.p;
			p->nkids = v.n;
		}
		break;
	}
	case T_LPAREN: {
		next(P);
		if (accept(P, T_RPAREN)) {
			p = mkp(P_UNIT, k);
			break;
		}
		pat *first = parse_pattern(P);
		if (accept(P, T_RPAREN)) {
			p = first;
			break;
		}
		struct vec v = {0};
		vpush(&v, first);
		while (accept(P, T_COMMA)) {
			if (at(P, T_RPAREN))
				break;
			vpush(&v, parse_pattern(P));
		}
		expect(P, T_RPAREN, "')' closing the tuple pattern");
		p = mkp(P_TUPLE, k);
		p->kids = (pat **)v.p;
		p->nkids = v.n;
		break;
	}
	case T_LBRACK: {
		next(P);
		p = mkp(P_LIST, k);
		struct vec v = {0};
		while (!at(P, T_RBRACK)) {
			if (accept(P, T_ELLIPSIS)) {
				p->has_rest = 1;
				p->rest = parse_pat_atom(P);
				break;
			}
			vpush(&v, parse_pattern(P));
			if (!accept(P, T_COMMA))
				break;
		}
		expect(P, T_RBRACK, "']' closing the list pattern");
		p->kids = (pat **)v.p;
		p->nkids = v.n;
		break;
	}
	case T_LBRACE: {
		next(P);
		p = mkp(P_RECORD, k);
		struct vec names = {0}, kids = {0};
		while (!at(P, T_RBRACE)) {
			struct token *f = expect(P, T_IDENT, "a field name in the record pattern");
			vpush(&names, (void *)f->text);
			if (accept(P, T_COLON)) {
				vpush(&kids, parse_pattern(P));
			} else {
				pat *b = mkp(P_VAR, f);
				b->name = f->text;
				vpush(&kids, b);
			}
			if (!accept(P, T_COMMA))
				break;
		}
		expect(P, T_RBRACE, "'}' closing the record pattern");
		p->names = (const char **)names.p;
		p->kids = (pat **)kids.p;
		p->nkids = kids.n;
		break;
	}
	default:
		unexpected(P, "a pattern");
	}
	leave(P);
	return p;
}

static pat *parse_pattern(struct parser *P)
{
	enter(P);
	pat *h = parse_pat_atom(P);
	if (at(P, T_CONS)) {
		struct token *k = next(P);
		pat *c = mkp(P_CONS, k);
		c->kids = ail_alloc(2 * sizeof *c->kids);
		c->kids[0] = h;
		c->kids[1] = parse_pattern(P);
		c->nkids = 2;
		h = c;
	}
	leave(P);
	return h;
}

/* ---------------- expressions ---------------- */

static node *parse_expr(struct parser *P);

static node *with_kids(node *e, struct vec *v)
{
	e->kids = (node **)v->p;
	e->nkids = v->n;
	return e;
}

static node *parse_block(struct parser *P, struct token *open)
{
	/* after '{': statements separated by ';' or line breaks */
	struct vec stmts = {0}, lets = {0};
	int saved = P->depth;
	while (!at(P, T_RBRACE)) {
		/* each statement nests the rest of the block one level deeper */
		enter(P);
		struct token *k = peek(P);
		if (k->t == T_LET) {
			next(P);
			pat *pt = parse_pattern(P);
			if (accept(P, T_COLON))
				parse_type(P);
			expect(P, T_EQ, "'=' in let");
			node *val = parse_expr(P);
			if (accept(P, T_IN)) {
				/* `let x = e in body` used as a statement */
				node *l = mk(N_LET, k);
				l->pats = ail_alloc(sizeof *l->pats);
				l->pats[0] = pt;
				l->npats = 1;
				l->kids = ail_alloc(2 * sizeof *l->kids);
				l->kids[0] = val;
				l->kids[1] = parse_expr(P);
				l->nkids = 2;
				vpush(&stmts, l);
				vpush(&lets, NULL);
			} else {
				node *l = mk(N_LET, k);
				l->pats = ail_alloc(sizeof *l->pats);
				l->pats[0] = pt;
				l->npats = 1;
				l->kids = ail_alloc(2 * sizeof *l->kids);
				l->kids[0] = val;
				l->nkids = 2;
				vpush(&stmts, l);
				vpush(&lets, l);
			}
		} else {
			vpush(&stmts, parse_expr(P));
			vpush(&lets, NULL);
		}
		if (accept(P, T_SEMI)) {
			while (accept(P, T_SEMI))
				;
			continue;
		}
		if (at(P, T_RBRACE))
			break;
		if (!peek(P)->newline_before)
			unexpected(P, "';' or '}' in block");
	}
	expect(P, T_RBRACE, "'}' closing the block");
	P->depth = saved;
	if (stmts.n == 0) {
		return mk(N_UNIT, open);
	}
	/* fold right: let binds the rest; other statements sequence */
	node *rest = NULL;
	for (int i = stmts.n - 1; i >= 0; i--) {
		node *s = stmts.p[i];
		if (lets.p[i]) {
			s->kids[1] = rest ? rest : mk(N_UNIT, open);
			rest = s;
		} else if (!rest) {
			rest = s;
		} else {
			node *q = mk(N_SEQ, (struct token *)&(struct token){.line = s->line, .col = s->col});
			q->kids = ail_alloc(2 * sizeof *q->kids);
			q->kids[0] = s;
			q->kids[1] = rest;
			q->nkids = 2;
			rest = q;
		}
	}
	return rest;
}

static node *parse_primary(struct parser *P)
{
	struct token *k = peek(P);
	node *e;
	switch (k->t) {
	case T_INT:
		next(P);
		if (k->len)
			ail_fail("PAR_BAD_NUMBER", k->line, k->col, "integer literal out of range");
		e = mk(N_INT, k);
		e->ival = k->ival;
		return e;
	case T_FLOAT:
		next(P);
		e = mk(N_FLOAT, k);
		e->fval = k->fval;
		return e;
	case T_STR:
		next(P);
		e = mk(N_STR, k);
		e->name = k->text;
		e->len = k->len;
		return e;
	case T_ISTR_BEGIN: {
		next(P);
		struct vec parts = {0};
		node *lit = mk(N_STR, k);
		lit->name = k->text;
		lit->len = k->len;
		vpush(&parts, lit);
		for (;;) {
			vpush(&parts, parse_expr(P));
			struct token *m = peek(P);
			if (m->t != T_ISTR_MID && m->t != T_ISTR_END)
				unexpected(P, "'}' closing the interpolation");
			next(P);
			lit = mk(N_STR, m);
			lit->name = m->text;
			lit->len = m->len;
			vpush(&parts, lit);
			if (m->t == T_ISTR_END)
				break;
		}
		e = mk(N_ISTR, k);
		return with_kids(e, &parts);
	}
	case T_TRUE: case T_FALSE:
		next(P);
		e = mk(N_BOOL, k);
		e->ival = (k->t == T_TRUE);
		return e;
	case T_IDENT:
		next(P);
		if (k->len == 1 && k->text[0] == '_')
			ail_fail("PAR_UNEXPECTED_TOKEN", k->line, k->col, "'_' is only allowed in patterns");
		e = mk(N_VAR, k);
		e->name = k->text;
		return e;
	case T_UIDENT:
		next(P);
		e = mk(N_CTOR, k);
		e->name = k->text;
		return e;
	case T_LPAREN: {
		next(P);
		if (accept(P, T_RPAREN))
			return mk(N_UNIT, k);
		node *first = parse_expr(P);
		if (accept(P, T_RPAREN))
			return first;
		struct vec v = {0};
		vpush(&v, first);
		while (accept(P, T_COMMA)) {
			if (at(P, T_RPAREN))
				break;
			vpush(&v, parse_expr(P));
		}
		expect(P, T_RPAREN, "')' closing the tuple");
		return with_kids(mk(N_TUPLE, k), &v);
	}
	case T_LBRACK: {
		next(P);
		struct vec v = {0};
		while (!at(P, T_RBRACK)) {
			vpush(&v, parse_expr(P));
			if (!accept(P, T_COMMA))
				break;
		}
		expect(P, T_RBRACK, "']' closing the list");
		return with_kids(mk(N_LIST, k), &v);
	}
	case T_LBRACE: {
		next(P);
		struct token *a = peek(P), *b = peekn(P, 1);
		if (a->t == T_IDENT && b->t == T_PIPE) {
			/* record update { r | f: e, ... }: kids[0] is the record */
			struct vec names = {0}, vals = {0};
			node *base = mk(N_VAR, a);
			base->name = a->text;
			next(P);
			next(P);
			vpush(&vals, base);
			while (!at(P, T_RBRACE)) {
				struct token *f = expect(P, T_IDENT, "a field name");
				expect(P, T_COLON, "':' after the field name");
				vpush(&names, (void *)f->text);
				vpush(&vals, parse_expr(P));
				if (!accept(P, T_COMMA))
					break;
			}
			expect(P, T_RBRACE, "'}' closing the record update");
			e = with_kids(mk(N_RECUPD, k), &vals);
			e->names = (const char **)names.p;
			return e;
		}
		if (a->t == T_RBRACE || ((a->t == T_IDENT) && b->t == T_COLON)) {
			/* record literal */
			struct vec names = {0}, vals = {0};
			while (!at(P, T_RBRACE)) {
				struct token *f = expect(P, T_IDENT, "a field name");
				if (names.n >= AIL_MAX_FIELDS)
					ail_fail("PAR_TOO_LARGE", f->line, f->col, "record has more than %d fields", AIL_MAX_FIELDS);
				for (int i = 0; i < names.n; i++)
					if (names.p[i] == (void *)f->text)
						ail_fail("PAR_DUPLICATE_FIELD", f->line, f->col, "duplicate field '%s' in record", f->text);
				expect(P, T_COLON, "':' after the field name");
				vpush(&names, (void *)f->text);
				vpush(&vals, parse_expr(P));
				if (!accept(P, T_COMMA))
					break;
			}
			expect(P, T_RBRACE, "'}' closing the record");
			e = with_kids(mk(N_RECORD, k), &vals);
			e->names = (const char **)names.p;
			return e;
		}
		return parse_block(P, k);
	}
	case T_BACKSLASH: {
		next(P);
		struct vec ps = {0};
		while (at(P, T_IDENT)) {
			struct token *pn = next(P);
			vpush(&ps, (void *)pn->text);
			if (accept(P, T_COLON))
				parse_type_atom(P);
		}
		if (ps.n == 0)
			unexpected(P, "a parameter name after '\\'");
		expect(P, T_DOT, "'.' after the lambda parameters");
		e = mk(N_LAMBDA, k);
		e->names = (const char **)ps.p;
		e->npats = ps.n;
		e->kids = ail_alloc(sizeof *e->kids);
		e->kids[0] = parse_expr(P);
		e->nkids = 1;
		return e;
	}
	case T_IF: {
		next(P);
		e = mk(N_IF, k);
		e->kids = ail_alloc(3 * sizeof *e->kids);
		e->nkids = 3;
		e->kids[0] = parse_expr(P);
		expect(P, T_THEN, "'then'");
		e->kids[1] = parse_expr(P);
		expect(P, T_ELSE, "'else'");
		e->kids[2] = parse_expr(P);
		return e;
	}
	case T_MATCH: {
		next(P);
		e = mk(N_MATCH, k);
		node *scrut = parse_expr(P);
		expect(P, T_LBRACE, "'{' after the match scrutinee");
		struct vec pats = {0}, guards = {0}, bodies = {0};
		vpush(&bodies, scrut);
		while (!at(P, T_RBRACE)) {
			accept(P, T_PIPE); /* optional leading bar */
			vpush(&pats, parse_pattern(P));
			vpush(&guards, accept(P, T_IF) ? parse_expr(P) : NULL);
			expect(P, T_FATARROW, "'=>' in match arm");
			vpush(&bodies, parse_expr(P));
			if (accept(P, T_COMMA))
				continue;
			if (at(P, T_RBRACE))
				break;
			if (!peek(P)->newline_before)
				unexpected(P, "',' or '}' after the match arm");
		}
		expect(P, T_RBRACE, "'}' closing the match");
		if (pats.n == 0)
			ail_fail("PAR_EMPTY_MATCH", k->line, k->col, "match has no arms");
		with_kids(e, &bodies);
		e->pats = (pat **)pats.p;
		e->guards = (node **)guards.p;
		e->npats = pats.n;
		return e;
	}
	case T_LET: {
		next(P);
		e = mk(N_LET, k);
		e->pats = ail_alloc(sizeof *e->pats);
		e->pats[0] = parse_pattern(P);
		e->npats = 1;
		if (accept(P, T_COLON))
			parse_type(P);
		expect(P, T_EQ, "'=' in let");
		e->kids = ail_alloc(2 * sizeof *e->kids);
		e->nkids = 2;
		e->kids[0] = parse_expr(P);
		expect(P, T_IN, "'in' after a let outside a block");
		e->kids[1] = parse_expr(P);
		return e;
	}
	default:
		unexpected(P, "an expression");
	}
}

static node *parse_postfix(struct parser *P)
{
	node *e = parse_primary(P);
	for (;;) {
		struct token *k = peek(P);
		if (k->t == T_LPAREN && !k->newline_before) {
			next(P);
			struct vec v = {0};
			vpush(&v, e);
			while (!at(P, T_RPAREN)) {
				vpush(&v, parse_expr(P));
				if (!accept(P, T_COMMA))
					break;
			}
			expect(P, T_RPAREN, "')' closing the call");
			node *c = mk(N_CALL, k);
			c->line = e->line;
			c->col = e->col;
			e = with_kids(c, &v);
		} else if (k->t == T_DOT) {
			next(P);
			struct token *f = peek(P);
			if (f->t != T_IDENT && f->t != T_UIDENT)
				unexpected(P, "a field name after '.'");
			next(P);
			node *d = mk(N_FIELD, f);
			d->name = f->text;
			d->kids = ail_alloc(sizeof *d->kids);
			d->kids[0] = e;
			d->nkids = 1;
			e = d;
		} else {
			return e;
		}
	}
}

static node *parse_unary(struct parser *P)
{
	enter(P);
	struct token *k = peek(P);
	node *e;
	if (k->t == T_NOT || k->t == T_BANG) {
		next(P);
		e = mk(N_NOT, k);
		e->kids = ail_alloc(sizeof *e->kids);
		e->kids[0] = parse_unary(P);
		e->nkids = 1;
	} else if (k->t == T_MINUS) {
		next(P);
		struct token *d = peek(P);
		if (d->t == T_INT && d->len) {
			/* -9223372036854775808 */
			next(P);
			e = mk(N_INT, k);
			e->ival = INT64_MIN;
		} else {
			e = mk(N_NEG, k);
			e->kids = ail_alloc(sizeof *e->kids);
			e->kids[0] = parse_unary(P);
			e->nkids = 1;
		}
	} else {
		e = parse_postfix(P);
	}
	leave(P);
	return e;
}

static int prec(enum tok t)
{
	switch (t) {
	case T_OROR: return 1;
	case T_ANDAND: return 2;
	case T_EQEQ: case T_NE: case T_LT: case T_GT: case T_LE: case T_GE: return 3;
	case T_CONS: case T_PLUSPLUS: return 4;
	case T_PLUS: case T_MINUS: return 5;
	case T_STAR: case T_SLASH: case T_PERCENT: return 6;
	default: return 0;
	}
}

static node *parse_binary(struct parser *P, int minp)
{
	enter(P);
	int saved = P->depth;
	node *l = parse_unary(P);
	for (;;) {
		struct token *k = peek(P);
		int p = prec(k->t);
		if (!p || p < minp)
			break;
		/* a left-associative chain deepens the tree as much as nesting does */
		enter(P);
		next(P);
		int right = (k->t == T_CONS || k->t == T_PLUSPLUS);
		node *r = parse_binary(P, right ? p : p + 1);
		node *b = mk(N_BINOP, k);
		b->op = k->t;
		b->kids = ail_alloc(2 * sizeof *b->kids);
		b->kids[0] = l;
		b->kids[1] = r;
		b->nkids = 2;
		l = b;
	}
	P->depth = saved;
	leave(P);
	return l;
}

static node *parse_expr(struct parser *P)
{
	enter(P);
	node *e = parse_binary(P, 1);
	leave(P);
	return e;
}

/* ---------------- declarations ---------------- */

static const char *parse_path(struct parser *P, int *line, int *col)
{
	struct buf b = {0};
	struct token *k = peek(P);
	*line = k->line;
	*col = k->col;
	for (;;) {
		k = peek(P);
		if (!k->text || k->t == T_STR || k->t == T_ISTR_BEGIN)
			unexpected(P, "a module path segment");
		next(P);
		buf_put(&b, k->text, k->len);
		if (!at(P, T_SLASH))
			break;
		next(P);
		buf_putc(&b, '/');
	}
	return ail_intern(b.p, b.len);
}

static void skip_annotation(struct parser *P)
{
	/* @name("...") : parsed and kept only as syntax */
	expect(P, T_AT, "'@'");
	struct token *k = peek(P);
	/* any word, keywords included (@pure, @export) */
	if (!k->text || k->t == T_STR || k->t == T_ISTR_BEGIN || k->t == T_ISTR_MID || k->t == T_ISTR_END)
		unexpected(P, "an annotation name after '@'");
	next(P);
	if (accept(P, T_LPAREN)) {
		while (!at(P, T_RPAREN)) {
			parse_expr(P);
			if (!accept(P, T_COMMA))
				break;
		}
		expect(P, T_RPAREN, "')' closing the annotation");
	}
}

static void parse_clauses(struct parser *P, struct func *f, struct vec *req, struct vec *ens)
{
	for (;;) {
		if (at(P, T_REQUIRES) || at(P, T_ENSURES)) {
			int is_req = at(P, T_REQUIRES);
			next(P);
			expect(P, T_LBRACE, "'{' after requires/ensures");
			node *c = parse_expr(P);
			expect(P, T_RBRACE, "'}' closing the contract");
			vpush(is_req ? req : ens, c);
		} else if (at(P, T_TESTS)) {
			struct token *tk = next(P);
			expect(P, T_LBRACK, "'[' after tests");
			struct vec rows = {0};
			while (!at(P, T_RBRACK)) {
				struct token *rt = peek(P);
				node *row = parse_expr(P);
				if (row->k != N_TUPLE || row->nkids != 2)
					ail_fail("PAR_BAD_TEST", rt->line, rt->col, "a tests row must be (input, expected)");
				struct test_row *r = ail_alloc(sizeof *r);
				r->input = row->kids[0];
				r->expected = row->kids[1];
				r->line = rt->line;
				r->col = rt->col;
				vpush(&rows, r);
				if (!accept(P, T_COMMA))
					break;
			}
			expect(P, T_RBRACK, "']' closing the tests");
			if (f->has_tests)
				ail_fail("PAR_BAD_TEST", tk->line, tk->col, "function '%s' has more than one tests clause", f->name);
			f->has_tests = 1;
			f->tests = ail_alloc((size_t)(rows.n ? rows.n : 1) * sizeof *f->tests);
			for (int i = 0; i < rows.n; i++)
				f->tests[i] = *(struct test_row *)rows.p[i];
			f->ntests = rows.n;
		} else {
			break;
		}
	}
}

static struct func *parse_func(struct parser *P, int exported, int pure)
{
	struct token *fk = expect(P, T_FUNC, "'func'");
	(void)fk;
	struct token *nm = expect(P, T_IDENT, "a function name");
	struct func *f = ail_alloc(sizeof *f);
	f->name = nm->text;
	f->line = nm->line;
	f->col = nm->col;
	f->exported = exported;
	f->pure = pure;
	if (accept(P, T_LBRACK)) { /* type parameters */
		while (!at(P, T_RBRACK)) {
			expect(P, T_IDENT, "a type parameter");
			if (!accept(P, T_COMMA))
				break;
		}
		expect(P, T_RBRACK, "']' closing the type parameters");
	}
	expect(P, T_LPAREN, "'(' after the function name");
	int cap = 0;
	while (!at(P, T_RPAREN)) {
		struct token *pn = expect(P, T_IDENT, "a parameter name");
		if (f->nparams >= AIL_MAX_FIELDS)
			ail_fail("PAR_TOO_LARGE", pn->line, pn->col, "function has more than %d parameters", AIL_MAX_FIELDS);
		for (int i = 0; i < f->nparams; i++)
			if (f->params[i].name == pn->text)
				ail_fail("PAR_DUPLICATE_PARAM", pn->line, pn->col, "duplicate parameter '%s'", pn->text);
		if (f->nparams == cap) {
			int nc = cap ? cap * 2 : 4;
			struct param *np = ail_alloc((size_t)nc * sizeof *np);
			if (f->nparams)
				memcpy(np, f->params, (size_t)f->nparams * sizeof *np);
			f->params = np;
			cap = nc;
		}
		f->params[f->nparams].name = pn->text;
		f->params[f->nparams].line = pn->line;
		f->params[f->nparams].col = pn->col;
		f->nparams++;
		if (accept(P, T_COLON))
			parse_type(P);
		if (!accept(P, T_COMMA))
			break;
	}
	expect(P, T_RPAREN, "')' closing the parameters");
	if (accept(P, T_ARROW))
		parse_type(P);
	if (accept(P, T_BANG))
		parse_effects(P);
	struct vec req = {0}, ens = {0};
	parse_clauses(P, f, &req, &ens);
	f->requires_ = (node **)req.p;
	f->nrequires = req.n;
	f->ensures_ = (node **)ens.p;
	f->nensures = ens.n;
	if (accept(P, T_EQ)) {
		f->body = parse_expr(P);
	} else if (at(P, T_LBRACE)) {
		struct token *ob = next(P);
		f->body = parse_block(P, ob);
	} else {
		unexpected(P, "'{' or '=' starting the function body");
	}
	/* clauses may also follow an `= expr` body */
	struct vec req2 = {0}, ens2 = {0};
	parse_clauses(P, f, &req2, &ens2);
	if (req2.n || ens2.n) {
		for (int i = 0; i < req2.n; i++)
			vpush(&req, req2.p[i]);
		for (int i = 0; i < ens2.n; i++)
			vpush(&ens, ens2.p[i]);
		f->requires_ = (node **)req.p;
		f->nrequires = req.n;
		f->ensures_ = (node **)ens.p;
		f->nensures = ens.n;
	}
	return f;
}

static int builtin_type_name(const char *s)
{
	static const char *names[] = {"Json", "Option", "Result", "List", "Map", "string",
	                              "int", "float", "bool", "unit", NULL};
	for (int i = 0; names[i]; i++)
		if (strcmp(s, names[i]) == 0)
			return 1;
	return 0;
}

static void parse_typedecl(struct parser *P, struct module *m, struct vec *ctors)
{
	expect(P, T_TYPE, "'type'");
	expect(P, T_UIDENT, "a type name");
	if (accept(P, T_LBRACK)) {
		while (!at(P, T_RBRACK)) {
			expect(P, T_IDENT, "a type parameter");
			if (!accept(P, T_COMMA))
				break;
		}
		expect(P, T_RBRACK, "']' closing the type parameters");
	}
	expect(P, T_EQ, "'=' in the type declaration");
	struct token *a = peek(P), *b = peekn(P, 1);
	int adt = a->t == T_PIPE ||
	          (a->t == T_UIDENT && (b->t == T_LPAREN || b->t == T_PIPE ||
	                                (b->t != T_LBRACK && b->t != T_DOT && b->t != T_ARROW && !builtin_type_name(a->text))));
	if (!adt) {
		parse_type(P);
		return;
	}
	accept(P, T_PIPE);
	do {
		struct token *c = expect(P, T_UIDENT, "a constructor name");
		struct ctor_decl *d = ail_alloc(sizeof *d);
		d->name = c->text;
		d->line = c->line;
		d->col = c->col;
		if (accept(P, T_LPAREN)) {
			while (!at(P, T_RPAREN)) {
				parse_type(P);
				d->arity++;
				if (!accept(P, T_COMMA))
					break;
			}
			expect(P, T_RPAREN, "')' closing the constructor fields");
		}
		vpush(ctors, d);
	} while (accept(P, T_PIPE));
	(void)m;
}

struct module *ail_parse(const char *file, const char *src, size_t n)
{
	size_t ntok;
	struct token *toks = ail_lex(src, n, &ntok);
	struct parser P = {.t = toks, .n = ntok};
	struct module *m = ail_alloc(sizeof *m);
	m->file = file;
	if (at(&P, T_MODULE)) {
		next(&P);
		m->name = parse_path(&P, &m->name_line, &m->name_col);
		m->has_name = 1;
	}
	struct vec imports = {0}, funcs = {0}, ctors = {0};
	while (!at(&P, T_EOF)) {
		struct token *k = peek(&P);
		if (k->t == T_IMPORT) {
			next(&P);
			struct import *im = ail_alloc(sizeof *im);
			im->path = parse_path(&P, &im->line, &im->col);
			if (accept(&P, T_LPAREN)) {
				struct vec items = {0};
				while (!at(&P, T_RPAREN)) {
					struct token *it = peek(&P);
					if (it->t != T_IDENT && it->t != T_UIDENT)
						unexpected(&P, "an imported name");
					next(&P);
					struct import_item *ii = ail_alloc(sizeof *ii);
					ii->name = it->text;
					ii->alias = it->text;
					ii->line = it->line;
					ii->col = it->col;
					if (accept(&P, T_AS)) {
						struct token *al = peek(&P);
						if (al->t != T_IDENT && al->t != T_UIDENT)
							unexpected(&P, "a name after 'as'");
						next(&P);
						ii->alias = al->text;
					}
					vpush(&items, ii);
					if (!accept(&P, T_COMMA))
						break;
				}
				expect(&P, T_RPAREN, "')' closing the import list");
				im->items = ail_alloc((size_t)(items.n ? items.n : 1) * sizeof *im->items);
				for (int i = 0; i < items.n; i++)
					im->items[i] = *(struct import_item *)items.p[i];
				im->nitems = items.n;
			} else if (accept(&P, T_AS)) {
				struct token *al = peek(&P);
				if (al->t != T_IDENT && al->t != T_UIDENT)
					unexpected(&P, "a name after 'as'");
				next(&P);
				im->alias = al->text;
			}
			vpush(&imports, im);
			continue;
		}
		while (at(&P, T_AT))
			skip_annotation(&P);
		int exported = accept(&P, T_EXPORT);
		int pure = accept(&P, T_PURE);
		if (at(&P, T_FUNC)) {
			vpush(&funcs, parse_func(&P, exported, pure));
		} else if (at(&P, T_TYPE) && !pure) {
			parse_typedecl(&P, m, &ctors);
		} else {
			unexpected(&P, (exported || pure) ? "'func'" : "'import', 'func' or 'type'");
		}
	}
	m->imports = ail_alloc((size_t)(imports.n ? imports.n : 1) * sizeof *m->imports);
	for (int i = 0; i < imports.n; i++)
		m->imports[i] = *(struct import *)imports.p[i];
	m->nimports = imports.n;
	m->funcs = (struct func **)funcs.p;
	m->nfuncs = funcs.n;
	m->ctors = ail_alloc((size_t)(ctors.n ? ctors.n : 1) * sizeof *m->ctors);
	for (int i = 0; i < ctors.n; i++)
		m->ctors[i] = *(struct ctor_decl *)ctors.p[i];
	m->nctors = ctors.n;
	return m;
}
