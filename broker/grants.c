/* broker/grants.c: see grants.h. */
#include "broker/grants.h"
#include "store/store.h"
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int broker_effect_name_valid(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > BROKER_NAME_MAX) return 0;
	int seg_start = 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '.') {
			if (seg_start) return 0;
			seg_start = 1;
			continue;
		}
		if (seg_start ? !isalpha(c) : !(isalnum(c) || c == '_')) return 0;
		seg_start = 0;
	}
	return !seg_start;
}

int broker_scope_valid(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > BROKER_NAME_MAX) return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!(isalnum(c) || c == '.' || c == '_' || c == '/' || c == ':' || c == '-')) return 0;
	}
	return 1;
}

const char *broker_requirement_why(const char *effect, const char *scope)
{
	if (!broker_effect_name_valid(effect))
		return "effect must be " BROKER_EFFECT_GRAMMAR " (what a grant can name)";
	if (!broker_scope_valid(scope)) return "scope must be " BROKER_SCOPE_GRAMMAR " (what a grant can name)";
	return NULL;
}

int broker_episode_valid(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 64) return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (i > 0 && c == '-');
		if (!ok) return 0;
	}
	return 1;
}

static int parse_budget(const char *s, long long *out)
{
	if (!*s || strlen(s) > 16) return -1;
	for (const char *p = s; *p; p++)
		if (*p < '0' || *p > '9') return -1;
	if (s[0] == '0' && s[1]) return -1;
	errno = 0;
	long long v = strtoll(s, NULL, 10);
	if (errno || v < 0 || v > BROKER_BUDGET_MAX) return -1;
	*out = v;
	return 0;
}

int broker_grant_parse(const char *text, struct broker_grant *g, struct world_err *err)
{
	memset(g, 0, sizeof *g);
	const char *eq = strchr(text, '=');
	const char *colon = strrchr(text, ':');
	if (!eq || !colon || colon < eq)
		return werr(err, WX_USAGE, "grant \"%s\": expected EFFECT=SCOPE:BUDGET", text);
	size_t el = (size_t)(eq - text), sl = (size_t)(colon - eq - 1);
	if (el == 0 || el > BROKER_NAME_MAX) return werr(err, WX_USAGE, "grant \"%s\": effect name is empty or over %d bytes", text, BROKER_NAME_MAX);
	if (sl == 0 || sl > BROKER_NAME_MAX) return werr(err, WX_USAGE, "grant \"%s\": scope is empty or over %d bytes", text, BROKER_NAME_MAX);
	memcpy(g->effect, text, el);
	memcpy(g->scope, eq + 1, sl);
	if (!broker_effect_name_valid(g->effect))
		return werr(err, WX_USAGE, "grant \"%s\": effect name \"%s\" is not dotted segments of letters, digits and _ (e.g. Workspace.Read)", text, g->effect);
	if (!broker_scope_valid(g->scope))
		return werr(err, WX_USAGE, "grant \"%s\": scope \"%s\" may hold only letters, digits and . _ / : -", text, g->scope);
	if (parse_budget(colon + 1, &g->budget) < 0)
		return werr(err, WX_USAGE, "grant \"%s\": budget \"%s\" is not an integer from 0 to 2^53", text, colon + 1);
	return 0;
}

json_t *broker_grants_to_json(const struct broker_grant *g, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, json_pack("{s:s,s:s,s:I}", "effect", g[i].effect, "scope", g[i].scope,
		                                       "budget", (json_int_t)g[i].budget)) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

int broker_grants_from_json(const json_t *arr, struct broker_grant **out, size_t *n, struct world_err *err)
{
	*out = NULL;
	*n = 0;
	if (!json_is_array(arr)) return werr(err, WX_INTEGRITY, "session grants: not an array");
	size_t cnt = json_array_size(arr);
	struct broker_grant *g = calloc(cnt ? cnt : 1, sizeof *g);
	if (!g) return werr(err, WX_FAIL, "session grants: out of memory");
	for (size_t i = 0; i < cnt; i++) {
		json_t *e = json_array_get(arr, i);
		const char *ef = json_string_value(json_object_get(e, "effect"));
		const char *sc = json_string_value(json_object_get(e, "scope"));
		json_t *b = json_object_get(e, "budget");
		if (!ef || !sc || !json_is_integer(b) || !broker_effect_name_valid(ef) || !broker_scope_valid(sc) ||
		    json_integer_value(b) < 0 || json_integer_value(b) > BROKER_BUDGET_MAX) {
			free(g);
			return werr(err, WX_INTEGRITY, "session grants: element %zu is not a valid grant", i);
		}
		snprintf(g[i].effect, sizeof g[i].effect, "%s", ef);
		snprintf(g[i].scope, sizeof g[i].scope, "%s", sc);
		g[i].budget = json_integer_value(b);
	}
	*out = g;
	*n = cnt;
	return 0;
}

const char *broker_label_name(enum broker_label l)
{
	switch (l) {
	case BROKER_ALLOWED: return "allowed";
	case BROKER_DENIED_EFFECT: return "denied:effect-name";
	case BROKER_DENIED_SCOPE: return "denied:scope";
	case BROKER_DENIED_EXPIRED: return "denied:expired";
	case BROKER_DENIED_BUDGET: return "denied:budget";
	}
	return "denied:effect-name";
}

int broker_decide(struct world_store *st, const char *episode, const struct broker_grant *g, size_t n,
                  long long expires_at, long long now, const char *effect, const char *scope, long long cost,
                  struct broker_decision *out, struct world_err *err)
{
	out->label = BROKER_DENIED_EFFECT;
	out->budget_before = 0;
	out->grant_index = -1;
	for (size_t i = 0; i < n; i++) {
		enum broker_label l;
		long long remaining = 0;
		if (strcmp(g[i].effect, effect) != 0) {
			l = BROKER_DENIED_EFFECT;
		} else if (strcmp(g[i].scope, scope) != 0) {
			l = BROKER_DENIED_SCOPE;
		} else if (!(now < expires_at)) {
			l = BROKER_DENIED_EXPIRED;
		} else {
			long long spent = 0;
			if (world_journal_spent(st, episode, effect, scope, &spent, err) < 0) return -1;
			remaining = g[i].budget - spent;
			if (remaining < 0) remaining = 0;
			l = (cost >= 0 && cost <= remaining) ? BROKER_ALLOWED : BROKER_DENIED_BUDGET;
		}
		if (l == BROKER_ALLOWED) {
			out->label = l;
			out->budget_before = remaining;
			out->grant_index = (int)i;
			return 0;
		}
		if (out->grant_index < 0 || l > out->label) {
			out->label = l;
			out->budget_before = remaining;
			out->grant_index = (int)i;
		}
	}
	if (out->label == BROKER_DENIED_EFFECT) out->budget_before = 0;
	return 0;
}

int broker_visible(struct world_store *st, const char *episode, const struct broker_grant *g, size_t n,
                   long long expires_at, long long now, const char *effect, const char *scope, long long cost,
                   int *visible, struct world_err *err)
{
	*visible = 0;
	if (cost == 0) {
		for (size_t i = 0; i < n; i++)
			if (strcmp(g[i].effect, effect) == 0 && strcmp(g[i].scope, scope) == 0 && now < expires_at) {
				*visible = 1;
				break;
			}
		return 0;
	}
	struct broker_decision d;
	if (broker_decide(st, episode, g, n, expires_at, now, effect, scope, cost, &d, err) < 0) return -1;
	*visible = d.label == BROKER_ALLOWED;
	return 0;
}
