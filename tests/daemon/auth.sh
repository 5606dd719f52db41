#!/bin/bash
# Refused credentials as clients see them (issue 22 item 2): the RFC 6750
# challenge names the daemon's reason (error="invalid_token",
# error_description), the RFC 9728 protected-resource metadata names the
# resource and no authorization server, an OAuth client's registration and
# discovery get 404 with the reason its credential was refused, and two
# real clients print that reason and stop: the MCP TypeScript SDK client
# and mcp-remote (the stdio bridge desktop hosts use), against an expired
# credential and one revoked while the daemon runs.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
daemon_setup
CRED_REVOKED=$(printf '5%.0s' $(seq 64))
"$FIXTURE" session "$DB" "$CRED_REVOKED" ep-r '[]' +3600 || bail "fixture session"
daemon_start || bail "daemon did not start"
hdr() { curl -sS -m 30 -o /dev/null -D - "$@" | tr -d '\r' | sed -n 's/^[Ww][Ww][Ww]-[Aa]uthenticate: //p'; }
PRM="$URL/.well-known/oauth-protected-resource/mcp/"
mcp_hdr() { hdr -X POST "${MCP_HDRS[@]}" "$@" --data-binary '{"jsonrpc":"2.0","id":1,"method":"ping"}' "$URL/mcp/"; }

is "$(mcp_hdr)" "Bearer realm=\"worldd\", resource_metadata=\"$PRM\"" \
  "no credential: a bare challenge with realm and resource_metadata (RFC 6750 3.1: no error code)"
is "$(mcp_hdr -H 'Authorization: Bearer nothex')" \
  "Bearer realm=\"worldd\", error=\"invalid_request\", error_description=\"malformed Authorization header: expected Bearer <64-hex-credential> (SessionAbsent)\", resource_metadata=\"$PRM\"" \
  "a malformed header: error=\"invalid_request\" with the daemon's text"
is "$(mcp_hdr -H "$(auth "$CRED_UNKNOWN")")" \
  "Bearer realm=\"worldd\", error=\"invalid_token\", error_description=\"unknown session credential (SessionUnknown)\", resource_metadata=\"$PRM\"" \
  "an unknown credential: error=\"invalid_token\", error_description names it"
is "$(mcp_hdr -H "$(auth "$CRED_EXPIRED")")" \
  "Bearer realm=\"worldd\", error=\"invalid_token\", error_description=\"session credential has expired (SessionExpired)\", resource_metadata=\"$PRM\"" \
  "an expired credential: error=\"invalid_token\", error_description says it expired"
like "$(hdr -H "$(auth "$CRED_EXPIRED")" "$URL/v1/head")" "error=\"invalid_token\".*resource_metadata=\"$URL/.well-known/oauth-protected-resource\"" \
  "a read route's 401 carries the challenge too (its resource is the origin)"
http POST /mcp/ -H "$(auth "$CRED_EXPIRED")" "${MCP_HDRS[@]}" --data-binary '{"jsonrpc":"2.0","id":1,"method":"ping"}'
is "$STATUS $BODY" '401 {"error":{"class":"SessionExpired","message":"session credential has expired"}}' "... the body is the envelope, as before"

http GET /.well-known/oauth-protected-resource/mcp/
is "$STATUS $(printf '%s' "$BODY" | jget resource) $(printf '%s' "$BODY" | jget bearer_methods_supported)" "200 $URL/mcp/ [\"header\"]" \
  "protected-resource metadata of /mcp/: the resource, bearer in the header"
is "$(printf '%s' "$BODY" | jget authorization_servers)" "null" "... and no authorization server (none issues these credentials)"
http GET /.well-known/oauth-protected-resource
is "$STATUS $(printf '%s' "$BODY" | jget resource)" "200 $URL/" "the root metadata names the origin"
http GET /.well-known/oauth-protected-resource/elsewhere
is "$STATUS" 404 "metadata of another path: 404"
for p in /.well-known/oauth-authorization-server /.well-known/openid-configuration /authorize /token; do
  http GET "$p"
  is "$STATUS $(printf '%s' "$BODY" | jget error.class)" "404 NotFound" "GET $p: 404 (worldd is not an authorization server)"
done
http POST /register -H "$(auth "$CRED_EXPIRED")" -H 'Content-Type: application/json' --data-binary '{"client_name":"x"}'
like "$STATUS $BODY" '^404 .*is not an OAuth authorization server.*worldd session mint.*refused: session credential has expired' \
  "dynamic client registration: 404 naming why the credential was refused"
http POST /register -H 'Content-Type: application/json' --data-binary '{}'
like "$BODY" 'this client sent no credential' "... without a credential it says so"
http POST /register -H "$(auth "$CRED")" -H 'Content-Type: application/json' --data-binary '{}'
like "$BODY" 'is a live session' "... with a live one it says that (nothing to fix there)"

# revoked while the daemon runs (the session is gone: unknown from now on)
"$WORLDD" session revoke --store "$DB" --episode ep-r >/dev/null 2>&1; is $? 0 "worldd session revoke of ep-r while the daemon serves"
is "$(mcp_hdr -H "$(auth "$CRED_REVOKED")" | sed 's/, resource_metadata.*//')" \
  'Bearer realm="worldd", error="invalid_token", error_description="unknown session credential (SessionUnknown)"' "the revoked credential is refused invalid_token"

NPM="$top_srcdir/build/npm/node_modules"
[ -d "$NPM/@modelcontextprotocol/sdk" ] && [ -d "$NPM/mcp-remote" ] || "$top_srcdir/scripts/install-test-deps.sh" >/dev/null 2>&1
if command -v node >/dev/null && [ -d "$NPM/@modelcontextprotocol/sdk" ]; then
  mkdir -p "$T/node" && ln -s "$NPM" "$T/node/node_modules" && cp "$top_srcdir/tests/daemon/sdk-clients.mjs" "$T/node/"
  for c in "$CRED_EXPIRED:session credential has expired" "$CRED_REVOKED:unknown session credential"; do
    timeout 60 node "$T/node/sdk-clients.mjs" "$URL" "${c%%:*}" auth > "$T/sdk.out" 2>&1; rc=$?
    nok "$rc" "MCP SDK client, ${c#*:}: connect fails"
    like "$(cat "$T/sdk.out")" "${c#*:}" "MCP SDK client shows the daemon's reason: ${c#*:}"
  done
else
  skip "node or @modelcontextprotocol/sdk missing" "MCP SDK client" 4
fi
if command -v node >/dev/null && [ -f "$NPM/mcp-remote/dist/proxy.js" ]; then
  for c in "$CRED_EXPIRED:session credential has expired" "$CRED_REVOKED:unknown session credential"; do
    mkdir -p "$T/home"
    HOME="$T/home" timeout 60 node "$NPM/mcp-remote/dist/proxy.js" "$URL/mcp/" --header "Authorization: Bearer ${c%%:*}" \
      --transport http-only < /dev/null > "$T/remote.out" 2>&1; rc=$?
    ok $([ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; echo $?) "mcp-remote, ${c#*:}: stops by itself with an error (exit $rc)"
    like "$(cat "$T/remote.out")" "the credential this client sent was refused: ${c#*:}" "mcp-remote prints the daemon's reason: ${c#*:}"
    ! grep -q "Please authorize\|Browser opened\|authorizationUrl" "$T/remote.out"; ok $? "mcp-remote, ${c#*:}: no browser sign-in is started"
  done
else
  skip "node or mcp-remote missing (scripts/install-test-deps.sh)" "mcp-remote" 6
fi
daemon_stop
is "$DRC" 0 "daemon stops cleanly"
done_testing
