/* interp/ail.h: the shared internals of ailang-lite (docs/design.md §11).
 *
 * Owns: the token, AST, pattern and value types, the bounded arena
 * allocator (heap cap), the error reporter (one `Error: CODE at
 * FILE:LINE:COL: message` line, then a longjmp back to the command), and
 * the prototypes of the lexer (lex.c), parser (parse.c), static checker
 * (check.c), evaluator and std library (eval.c, std.c) and JSON codec
 * (json.c). Nothing here depends on any library beyond libc: the binary is
 * linked -static and runs in an empty capsule root. */
#ifndef AIL_H
#define AIL_H
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

#define AIL_VERSION "AILANG-lite v0.1.0"

/* ---- limits (documented in docs/ailang-lite.md) ---- */
#define AIL_HEAP_CAP_DEFAULT (192u << 20) /* bytes; AILANG_LITE_HEAP_MB overrides */
#define AIL_MAX_NEST 1000       /* syntactic nesting depth of one source */
#define AIL_MAX_FIELDS 1024     /* fields of one record literal, parameters of one function */
#define AIL_MAX_JSON_NEST 512   /* nesting depth accepted by json decode */
#define AIL_MAX_SOURCE (1u << 20)  /* bytes of one .ail source (= SUP_SOURCE_MAX) */
#define AIL_MAX_ARGS (64u << 20)   /* bytes of the --args-* text */
#define AIL_STACK_MARGIN (1u << 20) /* kept free below the recursion cut-off */

/* ---- memory: one arena; everything lives until exit ---- */
void *ail_alloc(size_t n);          /* zeroed; RT_HEAP error when over the cap */
char *ail_strndup(const char *s, size_t n);
void ail_heap_init(void);
void ail_heap_free_all(void);
/* Free everything and forget interned names (fuzzing: one input after another). */
void ail_reset(void);
size_t ail_heap_used(void);
void ail_heap_set_cap(size_t bytes);
/* Grow (or create, old == NULL) a block outside the arena, counted against
 * the cap and freed with the arena. */
void *ail_grow(void *old, size_t new_size);

/* ---- errors ---- */
struct ail_errctx {
	jmp_buf *jb;  /* current handler; NULL: exit(1) */
	/* first error, kept for `check --json` */
	char code[48];
	char file[512];
	int line, col;
	char msg[1024];
	int quiet;  /* do not print (check --json collects instead) */
};
extern struct ail_errctx ail_err;
extern const char *ail_cur_file;  /* file name used in messages */
extern int ail_pos_line, ail_pos_col; /* expression being evaluated */
/* Report an error at a position and longjmp to the active handler. */
_Noreturn void ail_fail(const char *code, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Check the C stack; fails with RT_STACK when recursion goes too deep. */
void ail_stack_check(int line, int col);
void ail_stack_init(void);

/* ---- interned names: equal names are the same pointer ---- */
const char *ail_intern(const char *s, size_t n);

/* ---- tokens ---- */
enum tok {
	T_EOF, T_IDENT, T_UIDENT, T_INT, T_FLOAT, T_STR,
	T_ISTR_BEGIN, T_ISTR_MID, T_ISTR_END, /* interpolated string pieces */
	T_LPAREN, T_RPAREN, T_LBRACK, T_RBRACK, T_LBRACE, T_RBRACE,
	T_COMMA, T_SEMI, T_COLON, T_DOT, T_ELLIPSIS, T_AT, T_BACKSLASH,
	T_ARROW, T_FATARROW, T_EQ, T_EQEQ, T_NE, T_LT, T_GT, T_LE, T_GE,
	T_ANDAND, T_OROR, T_PLUS, T_MINUS, T_STAR, T_SLASH, T_PERCENT,
	T_PLUSPLUS, T_CONS, T_BANG, T_PIPE, T_QUESTION,
	/* keywords */
	T_MODULE, T_IMPORT, T_EXPORT, T_PURE, T_FUNC, T_TYPE, T_LET, T_IN,
	T_IF, T_THEN, T_ELSE, T_MATCH, T_TRUE, T_FALSE, T_NOT, T_AS,
	T_TESTS, T_REQUIRES, T_ENSURES,
};

struct token {
	enum tok t;
	int line, col;
	int newline_before; /* first token on its line */
	const char *text;   /* identifiers (interned), string contents (unescaped) */
	size_t len;         /* length of text */
	int64_t ival;
	double fval;
};

struct token *ail_lex(const char *src, size_t n, size_t *ntok); /* fails with PAR_* */
const char *ail_tok_name(enum tok t);

/* ---- AST ---- */
typedef struct node node;
typedef struct pat pat;

enum nkind {
	N_INT, N_FLOAT, N_STR, N_ISTR, N_BOOL, N_UNIT, N_VAR, N_CTOR,
	N_LIST, N_TUPLE, N_RECORD, N_FIELD, N_CALL, N_LAMBDA, N_IF, N_MATCH,
	N_LET,   /* let PAT = kids[0]; kids[1]   (kids[1] may be NULL at block end) */
	N_SEQ,   /* kids[0]; kids[1] */
	N_BINOP, N_NOT, N_NEG,
	N_RECUPD, /* { kids[0] | names[i]: kids[i+1] } */
};

struct node {
	enum nkind k;
	int line, col;
	int op;              /* N_BINOP: an enum tok */
	int64_t ival;
	double fval;
	const char *name;    /* N_VAR, N_CTOR, N_FIELD, N_STR text */
	size_t len;          /* N_STR length */
	node **kids; int nkids;
	const char **names;  /* N_RECORD field names; N_LAMBDA params */
	pat **pats; node **guards; /* N_MATCH arms (kids = bodies), N_LET pats[0] */
	int npats;
	void *cache;         /* resolved global (func / builtin) */
};

enum pkind { P_WILD, P_VAR, P_INT, P_FLOAT, P_STR, P_BOOL, P_UNIT, P_CTOR,
	P_TUPLE, P_LIST, P_CONS, P_RECORD };

struct pat {
	enum pkind k;
	int line, col;
	const char *name;   /* P_VAR, P_CTOR, P_STR text */
	size_t len;
	int64_t ival;
	double fval;
	pat **kids; int nkids;  /* P_LIST: elements; P_CONS: head, tail */
	pat *rest;              /* P_LIST `...rest` */
	int has_rest;
	const char **names;     /* P_RECORD field names */
};

struct param { const char *name; int line, col; };

struct test_row { node *input, *expected; int line, col; };

struct func {
	const char *name;
	int line, col;
	int exported, pure;
	struct param *params; int nparams;
	node *body;
	node **requires_; int nrequires;
	node **ensures_; int nensures;
	struct test_row *tests; int ntests;
	int has_tests;
};

struct ctor_decl { const char *name; int arity; int line, col; };

struct import_item {
	const char *name;  /* name in the module */
	const char *alias; /* local name */
	int line, col;
};

struct import {
	const char *path;  /* e.g. std/json */
	int line, col;
	struct import_item *items; int nitems;
	const char *alias; /* `import std/json as J` */
};

struct module {
	const char *file;
	const char *name; int name_line, name_col; int has_name;
	struct import *imports; int nimports;
	struct func **funcs; int nfuncs;
	struct ctor_decl *ctors; int nctors;
};

struct module *ail_parse(const char *file, const char *src, size_t n); /* fails with PAR_* */

/* ---- values ---- */
typedef struct value value;
enum vkind { V_UNIT, V_BOOL, V_INT, V_FLOAT, V_STR, V_NIL, V_CONS, V_TUPLE,
	V_RECORD, V_CTOR, V_CLOSURE, V_FUNC, V_BUILTIN, V_CTORFN,
	V_BYTES /* std/bytes `bytes`: u.str holds the raw bytes (any, NUL included) */ };

typedef struct env env;
/* An appendable buffer behind strings built by `++`: a string whose bytes
 * end exactly at `used` may be extended in place (the bytes before stay
 * untouched, so every other string sharing the buffer is unchanged). */
struct strbuf { size_t used, cap; char data[]; };
struct env { const char *name; value *val; env *next; };

struct value {
	enum vkind k;
	union {
		int b;
		int64_t i;
		double f;
		struct { const char *s; size_t len; struct strbuf *sb; } str; /* sb: see concat in eval.c; V_BYTES: sb unused */
		struct { value *head, *tail; } cons;
		struct {
			int n;
			value **items;
			union {
				const char **names; /* V_RECORD field names */
				const char *cname;  /* V_CTOR / V_CTORFN constructor name */
			};
		} agg; /* tuple, record, constructor and its arguments */
		struct { node *lam; env *env; } clo;
		struct func *fn;
		struct { int id; const char *name; } bi;
	} u;
};

extern value ail_unit, ail_true, ail_false, ail_nil;
value *v_int(int64_t i);
value *v_float(double f);
value *v_str(const char *s, size_t len);   /* copies */
value *v_str_own(const char *s, size_t len); /* takes arena memory */
value *v_bytes(const char *s, size_t len); /* std/bytes value over these bytes (shared, never changed) */
value *v_bool(int b);
value *v_cons(value *h, value *t);
value *v_ctor(const char *name, int n, value **args);
value *v_ctor1(const char *name, value *a);
value *v_record(int n, const char **names, value **vals);
value *v_tuple(int n, value **items);
value *v_some(value *v);
value *v_none(void);
value *v_ok(value *v);
value *v_err(value *v);
int v_equal(value *a, value *b, int line, int col); /* structural; RT_TYPE on functions */
int v_compare(value *a, value *b, int line, int col); /* ints, floats, strings */
const char *v_kind_name(value *v);
long v_list_length(value *v);

/* growable byte buffer in the arena */
struct buf { char *p; size_t len, cap; };
void buf_put(struct buf *b, const char *s, size_t n);
void buf_putc(struct buf *b, char c);
void buf_puts(struct buf *b, const char *s);

void v_show(struct buf *b, value *v, int top);  /* `show` text */

/* ---- JSON ---- */
/* Decode JSON text into a Json value (JNull, JBool, JNumber, JString,
 * JArray, JObject). On failure returns NULL and writes a reason. */
value *ail_json_decode(const char *s, size_t n, char *why, size_t whylen);
/* Encode a Json value; RT_TYPE on anything that is not Json. */
void ail_json_encode(struct buf *b, value *v, int line, int col);
void ail_json_init(void); /* interns the Json names into ail_jnames */
/* The interned Json constructor and field names (pointer-comparable),
 * shared by the codec (json.c) and std/json (std.c). */
struct ail_json_names {
	const char *jnull, *jbool, *jnumber, *jstring, *jarray, *jobject, *key, *value;
};
extern struct ail_json_names ail_jnames;
void ail_json_quote(struct buf *b, const char *s, size_t n);
void ail_num_format(struct buf *b, double d);
/* Parse one JSON string literal (for --args-*). Returns 0 ok. */
int ail_json_string_literal(const char *s, size_t n, char **out, size_t *outlen,
                            char *why, size_t whylen);

/* ---- std library ---- */
/* One table (interp/std.c) serves the evaluator (module, name, arity, fn)
 * and `ailang-lite builtins` (signature, effect), so the printed list cannot
 * drift from what programs can call. */
struct builtin {
	const char *module;  /* prelude, std/json, std/string, std/list, ... */
	const char *name;
	int arity;           /* -1: variadic (none now) */
	value *(*fn)(value **args, int line, int col);
	const char *signature; /* AILANG type, e.g. "(string) -> Result[Json, string]" */
	const char *effect;    /* effect row: "" = pure (every ailang-lite builtin) */
};
const struct builtin *ail_builtin_find(const char *module, const char *name);
const struct builtin *ail_builtin_get(int id);
int ail_builtin_id(const struct builtin *b);
int ail_std_module_known(const char *path);
void ail_std_init(void); /* interns the constructor names; call first */
/* Constructors known without declaration (Option, Result, Json). -1 if unknown. */
int ail_builtin_ctor_arity(const char *name);

/* ---- program: resolution, checking, evaluation ---- */
struct program {
	struct module *mod;
	/* globals: user functions and imported builtins, by local name */
	int nglob, capglob;
	int *gindex, gindex_cap; /* open-addressing hash: glob index + 1 by name pointer */
	struct glob { const char *name; struct func *fn; const struct builtin *bi; value *val; } *globs;
	int nctor, capctor;
	struct ctor_decl *ctors;
};

/* Resolve imports and names; fails with LDR001 / MOD010 / TC_* / PAR_*.
 * check_modpath: enforce module name == path relative to cwd. */
struct program *ail_load(const char *file, const char *src, size_t n, int check_modpath);
/* Static checks over every function body (names, arity). Fails on the first. */
void ail_check(struct program *p);
struct glob *ail_glob_find(struct program *p, const char *name);
int ail_ctor_arity(struct program *p, const char *name);

value *ail_call(value *f, int n, value **args, int line, int col);
value *ail_call_func(struct func *fn, int n, value **args, int line, int col);
value *ail_eval(node *e, env *en);
void ail_eval_init(struct program *p);

#endif
