/* coordinator/catalog.h: the prompts and resources a package publishes beside
 * its transitions, and the MCP content items they (and a transition's
 * output) may carry.
 *
 * Owns: the stored forms of prompts and package resources in the
 * transition registry (registry.h: its optional "prompts" and "resources"
 * members), their checks (world-publish refuses what these refuse; the
 * daemon re-checks what it hands over), which a session sees (the same
 * access rule as a descriptor's), rendering a prompt with its arguments,
 * matching and reading a resource template, and the check of one MCP
 * content item (docs/publishing.md, "Prompts and resources" and "Content
 * items").
 *
 * A stored PROMPT (sorted by name in "prompts"):
 *   {"access":null|{"cost","effect","scope"},"arguments":[ARG,...],
 *    "description":TEXT,"messages":[{"content":ITEM,"role":"user"|"assistant"},...],
 *    "name":NAME,"title":TEXT}
 *   ARG = {"description":TEXT,"name":ANAME,"required":BOOL[,"values":[STRING,...]]}
 * A `{{ANAME}}` inside a message's strings is replaced by the argument's
 * value when the prompt is got; every `{{X}}` must name a declared argument.
 * A stored RESOURCE (sorted by uri or uriTemplate in "resources"):
 *   {"access":...,"description":TEXT,"mimeType":MIME,"name":TEXT,
 *    "text":TEXT|"blob":BASE64, "uri":URI | "uriTemplate":TEMPLATE}
 * A TEMPLATE holds `{VAR}` expressions (VAR of [A-Za-z0-9_], 1-32 bytes,
 * each at most once), which match 1-128 bytes of [A-Za-z0-9._~-] (RFC 3986's
 * unreserved characters: a value cannot break the text it is put into);
 * a template's `text` has each `{VAR}` replaced by the matched value. */
#ifndef WORLD_COORDINATOR_CATALOG_H
#define WORLD_COORDINATOR_CATALOG_H
#include <jansson.h>
#include <stddef.h>
#include "coordinator/coordinator.h"

#define CATALOG_NAME_MAX 128
#define CATALOG_ARGS_MAX 32
#define CATALOG_MESSAGES_MAX 64
#define CATALOG_VALUES_MAX 100
#define CATALOG_ENTRY_MAX (1024 * 1024) /* canonical bytes of one prompt or resource */

/* One MCP content item: text {text}, image / audio {data: Base64, mimeType},
 * resource {resource: {uri, mimeType?, text | blob}}, resource_link {uri,
 * name, ...}; "annotations" and "_meta" objects allowed. 0, or -1 with why
 * naming the member. */
int catalog_content_check(const json_t *item, char *why, size_t n);
/* A manifest's prompt / resource entry (with its "kind") into the stored
 * form (*out, new reference); -1 with why. */
int catalog_prompt_from_manifest(const json_t *entry, json_t **out, char *why, size_t n);
int catalog_resource_from_manifest(const json_t *entry, json_t **out, char *why, size_t n);
/* The key a stored entry is sorted and replaced by: a prompt's name, a
 * resource's uri or uriTemplate. */
const char *catalog_key(const json_t *stored);

/* The one visibility rule of a registry entry (a transition's descriptor, a
 * prompt, a resource): an entry without an "access" triple is visible to
 * every session; one with it, when the session's grants allow it now
 * (broker_visible: effect and scope exact, live, cost within what the
 * episode has left); a malformed triple hides the entry. *vis = 1 or 0. */
int catalog_entry_visible(struct world_store *st, const struct coord_session *s, const json_t *d, long long now,
                          int *vis, struct world_err *err);
/* The registry's member ("transitions", "prompts" or "resources") entries s
 * may see by that rule, a new array (empty when none); reg may be NULL. */
int catalog_visible(struct world_store *st, const struct coord_session *s, const json_t *reg, const char *member,
                    json_t **out, struct world_err *err);
/* prompts/get: the messages with the arguments put in (args: an object of
 * strings or NULL). NULL with why (-32602's text) for an unknown or missing
 * argument. */
json_t *catalog_prompt_render(const json_t *prompt, const json_t *args, char *why, size_t n);
/* uri matched against a template: 1 with *vars (object VAR -> value, new
 * reference), 0 when it does not match. */
int catalog_template_match(const char *tmpl, const char *uri, json_t **vars);
/* resources/read's contents item of a package resource read as uri (vars
 * from catalog_template_match, or NULL). */
json_t *catalog_resource_contents(const json_t *res, const char *uri, const json_t *vars);
#endif
