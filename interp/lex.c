/* interp/lex.c: the lexer of ailang-lite.
 *
 * Owns: turning source bytes into an array of tokens. String literals with
 * `${expr}` interpolation are split into ISTR_BEGIN / ISTR_MID / ISTR_END
 * pieces with the tokens of each expression in between; a stack of brace
 * depths tells a `}` that closes an interpolation from one that closes a
 * record or block inside it, so string literals nest inside the braces. */
#include "interp/ail.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const struct { const char *w; enum tok t; } keywords[] = {
	{"module", T_MODULE}, {"import", T_IMPORT}, {"export", T_EXPORT},
	{"pure", T_PURE}, {"func", T_FUNC}, {"type", T_TYPE}, {"let", T_LET},
	{"in", T_IN}, {"if", T_IF}, {"then", T_THEN}, {"else", T_ELSE},
	{"match", T_MATCH}, {"true", T_TRUE}, {"false", T_FALSE}, {"not", T_NOT},
	{"as", T_AS}, {"tests", T_TESTS}, {"requires", T_REQUIRES},
	{"ensures", T_ENSURES},
};

const char *ail_tok_name(enum tok t)
{
	switch (t) {
	case T_EOF: return "end of file";
	case T_IDENT: return "identifier";
	case T_UIDENT: return "constructor name";
	case T_INT: return "integer";
	case T_FLOAT: return "float";
	case T_STR: case T_ISTR_BEGIN: return "string";
	case T_ISTR_MID: case T_ISTR_END: return "string piece";
	case T_LPAREN: return "'('";
	case T_RPAREN: return "')'";
	case T_LBRACK: return "'['";
	case T_RBRACK: return "']'";
	case T_LBRACE: return "'{'";
	case T_RBRACE: return "'}'";
	case T_COMMA: return "','";
	case T_SEMI: return "';'";
	case T_COLON: return "':'";
	case T_DOT: return "'.'";
	case T_ELLIPSIS: return "'...'";
	case T_AT: return "'@'";
	case T_BACKSLASH: return "'\\'";
	case T_ARROW: return "'->'";
	case T_FATARROW: return "'=>'";
	case T_EQ: return "'='";
	case T_EQEQ: return "'=='";
	case T_NE: return "'!='";
	case T_LT: return "'<'";
	case T_GT: return "'>'";
	case T_LE: return "'<='";
	case T_GE: return "'>='";
	case T_ANDAND: return "'&&'";
	case T_OROR: return "'||'";
	case T_PLUS: return "'+'";
	case T_MINUS: return "'-'";
	case T_STAR: return "'*'";
	case T_SLASH: return "'/'";
	case T_PERCENT: return "'%'";
	case T_PLUSPLUS: return "'++'";
	case T_CONS: return "'::'";
	case T_BANG: return "'!'";
	case T_PIPE: return "'|'";
	case T_QUESTION: return "'?'";
	default:
		for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
			if (keywords[i].t == t)
				return keywords[i].w;
		return "token";
	}
}

struct lexer {
	const char *s;
	size_t n, i;
	int line, col;
	int line_of_last; /* line of the previous token */
	struct token *toks;
	size_t ntok, cap;
	int istack[AIL_MAX_NEST]; /* brace depth inside each open interpolation */
	int iline[AIL_MAX_NEST], icol[AIL_MAX_NEST]; /* where its string literal starts */
	int idepth;
};

static void adv(struct lexer *L)
{
	if (L->s[L->i] == '\n') {
		L->line++;
		L->col = 1;
	} else {
		L->col++;
	}
	L->i++;
}

static struct token *push(struct lexer *L, enum tok t, int line, int col)
{
	if (L->ntok == L->cap) {
		size_t nc = L->cap ? L->cap * 2 : 256;
		L->toks = ail_grow(L->toks, nc * sizeof *L->toks);
		L->cap = nc;
	}
	struct token *k = &L->toks[L->ntok++];
	memset(k, 0, sizeof *k);
	k->t = t;
	k->line = line;
	k->col = col;
	k->newline_before = (line != L->line_of_last);
	L->line_of_last = line;
	return k;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

static void put_utf8(struct buf *b, unsigned cp)
{
	char o[4];
	if (cp < 0x80) { o[0] = (char)cp; buf_put(b, o, 1); }
	else if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F)); buf_put(b, o, 2); }
	else if (cp < 0x10000) { o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[2] = (char)(0x80 | (cp & 0x3F)); buf_put(b, o, 3); }
	else { o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F)); o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F)); buf_put(b, o, 4); }
}

/* Lex string content from L->i (just after `"` or the `}` closing an
 * interpolation) up to the closing quote or the next `${`. `first` says
 * whether this piece starts the literal. */
static void lex_string_piece(struct lexer *L, int first, int line, int col)
{
	struct buf b = {0};
	for (;;) {
		if (L->i >= L->n)
			ail_fail("PAR_UNTERMINATED_STRING", line, col, "unterminated string literal");
		char c = L->s[L->i];
		if (c == '"') {
			adv(L);
			struct token *k = push(L, first ? T_STR : T_ISTR_END, line, col);
			k->text = b.p ? b.p : "";
			k->len = b.len;
			return;
		}
		if (c == '$' && L->i + 1 < L->n && L->s[L->i + 1] == '{') {
			adv(L); adv(L);
			struct token *k = push(L, first ? T_ISTR_BEGIN : T_ISTR_MID, line, col);
			k->text = b.p ? b.p : "";
			k->len = b.len;
			if (L->idepth >= AIL_MAX_NEST)
				ail_fail("PAR_NESTING_TOO_DEEP", line, col, "string interpolation nested too deeply (limit %d)", AIL_MAX_NEST);
			L->iline[L->idepth] = line;
			L->icol[L->idepth] = col;
			L->istack[L->idepth++] = 0;
			return;
		}
		if (c == '\n')
			ail_fail("PAR_UNTERMINATED_STRING", line, col, "unterminated string literal (newline inside the string)");
		if (c == '\\') {
			int el = L->line, ec = L->col;
			adv(L);
			if (L->i >= L->n)
				ail_fail("PAR_UNTERMINATED_STRING", line, col, "unterminated string literal");
			char e = L->s[L->i];
			adv(L);
			switch (e) {
			case 'n': buf_putc(&b, '\n'); break;
			case 't': buf_putc(&b, '\t'); break;
			case 'r': buf_putc(&b, '\r'); break;
			case '0': buf_putc(&b, '\0'); break;
			case '"': buf_putc(&b, '"'); break;
			case '\'': buf_putc(&b, '\''); break;
			case '\\': buf_putc(&b, '\\'); break;
			case '/': buf_putc(&b, '/'); break;
			case '$': buf_putc(&b, '$'); break;
			case 'u': {
				unsigned cp = 0;
				int braces = (L->i < L->n && L->s[L->i] == '{');
				if (braces)
					adv(L);
				int nd = 0;
				while (L->i < L->n && hexval((unsigned char)L->s[L->i]) >= 0 && nd < (braces ? 6 : 4)) {
					cp = cp * 16 + (unsigned)hexval((unsigned char)L->s[L->i]);
					adv(L);
					nd++;
				}
				if (braces) {
					if (L->i >= L->n || L->s[L->i] != '}')
						nd = 0;
					else
						adv(L);
				}
				if (nd == 0 || (!braces && nd != 4) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
					ail_fail("PAR_BAD_ESCAPE", el, ec, "invalid \\u escape in string literal");
				put_utf8(&b, cp);
				break;
			}
			default:
				ail_fail("PAR_BAD_ESCAPE", el, ec, "invalid escape '\\%c' in string literal",
				         (e >= 32 && e < 127) ? e : '?');
			}
			continue;
		}
		buf_putc(&b, c);
		adv(L);
	}
}

struct token *ail_lex(const char *src, size_t n, size_t *ntok)
{
	struct lexer L = {.s = src, .n = n, .line = 1, .col = 1, .line_of_last = 0};
	for (;;) {
		/* skip blanks and comments */
		while (L.i < L.n) {
			char c = L.s[L.i];
			if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v') {
				adv(&L);
			} else if (c == '-' && L.i + 1 < L.n && L.s[L.i + 1] == '-') {
				while (L.i < L.n && L.s[L.i] != '\n')
					adv(&L);
			} else {
				break;
			}
		}
		int line = L.line, col = L.col;
		if (L.i >= L.n) {
			if (L.idepth > 0)
				ail_fail("PAR_UNTERMINATED_STRING", line, col, "unterminated string interpolation");
			push(&L, T_EOF, line, col);
			break;
		}
		unsigned char c = (unsigned char)L.s[L.i];
		if (c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			size_t st = L.i;
			while (L.i < L.n) {
				unsigned char d = (unsigned char)L.s[L.i];
				if (d == '_' || (d >= 'a' && d <= 'z') || (d >= 'A' && d <= 'Z') || (d >= '0' && d <= '9'))
					adv(&L);
				else
					break;
			}
			size_t len = L.i - st;
			enum tok t = (c >= 'A' && c <= 'Z') ? T_UIDENT : T_IDENT;
			for (size_t k = 0; k < sizeof keywords / sizeof keywords[0]; k++)
				if (strlen(keywords[k].w) == len && memcmp(keywords[k].w, src + st, len) == 0)
					t = keywords[k].t;
			struct token *k = push(&L, t, line, col);
			k->text = ail_intern(src + st, len);
			k->len = len;
			continue;
		}
		if (c >= '0' && c <= '9') {
			size_t st = L.i;
			int isfloat = 0;
			while (L.i < L.n && L.s[L.i] >= '0' && L.s[L.i] <= '9')
				adv(&L);
			if (L.i + 1 < L.n && L.s[L.i] == '.' && L.s[L.i + 1] >= '0' && L.s[L.i + 1] <= '9') {
				isfloat = 1;
				adv(&L);
				while (L.i < L.n && L.s[L.i] >= '0' && L.s[L.i] <= '9')
					adv(&L);
			}
			if (L.i < L.n && (L.s[L.i] == 'e' || L.s[L.i] == 'E')) {
				size_t save_i = L.i;
				int sl = L.line, sc = L.col;
				adv(&L);
				if (L.i < L.n && (L.s[L.i] == '+' || L.s[L.i] == '-'))
					adv(&L);
				if (L.i < L.n && L.s[L.i] >= '0' && L.s[L.i] <= '9') {
					isfloat = 1;
					while (L.i < L.n && L.s[L.i] >= '0' && L.s[L.i] <= '9')
						adv(&L);
				} else {
					L.i = save_i; L.line = sl; L.col = sc;
				}
			}
			if (L.i < L.n && (L.s[L.i] == '_' || (L.s[L.i] >= 'a' && L.s[L.i] <= 'z') || (L.s[L.i] >= 'A' && L.s[L.i] <= 'Z')))
				ail_fail("PAR_BAD_NUMBER", line, col, "invalid number literal");
			char tmp[64];
			size_t len = L.i - st;
			if (len >= sizeof tmp)
				ail_fail("PAR_BAD_NUMBER", line, col, "number literal too long");
			memcpy(tmp, src + st, len);
			tmp[len] = 0;
			struct token *k = push(&L, isfloat ? T_FLOAT : T_INT, line, col);
			errno = 0;
			if (isfloat) {
				k->fval = strtod(tmp, NULL);
				if (errno == ERANGE)
					ail_fail("PAR_BAD_NUMBER", line, col, "float literal out of range: %s", tmp);
			} else {
				unsigned long long v = strtoull(tmp, NULL, 10);
				/* 9223372036854775808 is allowed only as the operand of unary minus;
				 * the parser folds it. */
				if (errno == ERANGE || v > (unsigned long long)INT64_MAX + 1ULL)
					ail_fail("PAR_BAD_NUMBER", line, col, "integer literal out of range: %s", tmp);
				k->ival = (int64_t)(v > (unsigned long long)INT64_MAX ? 0 : v);
				k->fval = (double)v;
				k->len = (v > (unsigned long long)INT64_MAX); /* marks 2^63 */
			}
			continue;
		}
		if (c == '"') {
			adv(&L);
			lex_string_piece(&L, 1, line, col);
			continue;
		}
		enum tok t;
		int w = 1;
		char c1 = L.i + 1 < L.n ? L.s[L.i + 1] : 0;
		char c2 = L.i + 2 < L.n ? L.s[L.i + 2] : 0;
		switch (c) {
		case '(': t = T_LPAREN; break;
		case ')': t = T_RPAREN; break;
		case '[': t = T_LBRACK; break;
		case ']': t = T_RBRACK; break;
		case '{':
			t = T_LBRACE;
			if (L.idepth > 0)
				L.istack[L.idepth - 1]++;
			break;
		case '}':
			if (L.idepth > 0 && L.istack[L.idepth - 1] == 0) {
				/* closes an interpolation: resume the string */
				L.idepth--;
				adv(&L);
				/* errors in the rest of the literal point at its opening quote */
				lex_string_piece(&L, 0, L.iline[L.idepth], L.icol[L.idepth]);
				continue;
			}
			if (L.idepth > 0)
				L.istack[L.idepth - 1]--;
			t = T_RBRACE;
			break;
		case ',': t = T_COMMA; break;
		case ';': t = T_SEMI; break;
		case ':': if (c1 == ':') { t = T_CONS; w = 2; } else t = T_COLON; break;
		case '.': if (c1 == '.' && c2 == '.') { t = T_ELLIPSIS; w = 3; } else t = T_DOT; break;
		case '@': t = T_AT; break;
		case '\\': t = T_BACKSLASH; break;
		case '-': if (c1 == '>') { t = T_ARROW; w = 2; } else t = T_MINUS; break;
		case '=':
			if (c1 == '>') { t = T_FATARROW; w = 2; }
			else if (c1 == '=') { t = T_EQEQ; w = 2; }
			else t = T_EQ;
			break;
		case '!': if (c1 == '=') { t = T_NE; w = 2; } else t = T_BANG; break;
		case '<': if (c1 == '=') { t = T_LE; w = 2; } else t = T_LT; break;
		case '>': if (c1 == '=') { t = T_GE; w = 2; } else t = T_GT; break;
		case '&':
			if (c1 == '&') { t = T_ANDAND; w = 2; break; }
			ail_fail("PAR_UNEXPECTED_CHAR", line, col, "unexpected character '&' (did you mean '&&'?)");
		case '|': if (c1 == '|') { t = T_OROR; w = 2; } else t = T_PIPE; break;
		case '+': if (c1 == '+') { t = T_PLUSPLUS; w = 2; } else t = T_PLUS; break;
		case '*': t = T_STAR; break;
		case '/': t = T_SLASH; break;
		case '%': t = T_PERCENT; break;
		case '?': t = T_QUESTION; break;
		default:
			if (c >= 32 && c < 127)
				ail_fail("PAR_UNEXPECTED_CHAR", line, col, "unexpected character '%c'", c);
			ail_fail("PAR_UNEXPECTED_CHAR", line, col, "unexpected byte 0x%02x", c);
		}
		for (int k = 0; k < w; k++)
			adv(&L);
		push(&L, t, line, col);
	}
	*ntok = L.ntok;
	return L.toks;
}
