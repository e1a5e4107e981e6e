"""The only failures `npm run test:contract` accepts, each with its reason.

Schemathesis generates requests from the OpenAPI document and reports a request that is valid
for the document but refused by the service as "schema-valid request rejected" (ST202). Some of
the service's rules cannot be written in an OpenAPI 3.0 document:

- rules that tie two members or parameters together (clientId needs accountId; a keyset cursor
  must name the sort field; uniqueField must name a field of the item; a plan's until is not
  before its since);
- rules on the names of a free-form object's members (OpenAPI 3.0 has no propertyNames), and
  the depth and size budgets of free-form values;
- value rules two levels or more inside a free-form member, where Schemathesis stops following
  the document's recursive schemas and generates any JSON;
- rules on the clock, on the service's state or on its configuration (expiresAt in the future;
  If-Match naming another version; an Idempotency-Key used before for another request; a
  region or a cluster the deployment's DATA_CLUSTERS has; an expiry within EXPIRY_MAX_SECONDS).

One header is left out of the document for some principals: X-Team is for root keys of team
members, and any X-Team from a sub or team key is refused (403) before the route runs — tested
in test/e2e/teams.e2e-spec.ts. The sub and team runs read the document without it, so that their
cases reach the routes instead of all meeting that refusal; the root run keeps it (the seeded
root user is an admin member of the seeded team).

The fuzzer's long polls are shortened to one second: a generated valid `wait` of GET /events
above 1 is sent as 1 (invalid ones are left alone), since every such case would otherwise wait
up to 30 s for an event; long polls are tested end to end (test/e2e/events.e2e-spec.ts).

POST /import takes NDJSON, GET /export and the account exports answer it: a generated body (one
record) is sent as one line, and a response's first line is what its schema is checked against
(each line of every NDJSON response is checked by the e2e tests, test/support/openapi-validator.ts).

Two reports of other kinds are dropped as well, for reasons of the same sort. POST /import
answers a line that is not a valid record with that line's own 4xx result inside a 200 (a bad
line does not stop the others), so "schema-violating request accepted" (ST201) there is dropped
when every result line of the answer is a 4xx. And DELETE
/data/{c}/index removes the index its body names while GET /data/{c}/index lists the remaining
ones, so "deleted resource still available" (ST301) on that list is the list answering.

This hook drops exactly those reports and nothing else: the check must be ST202, the response
the problem the rule produces, and for a 400 every error in it must be one listed below for that
operation. Any other error, status or check still fails the run.

Loaded by tools/contract/run.ts through SCHEMATHESIS_HOOKS. Each dropped failure is appended to
the file named by CONTRACT_EXCLUSIONS_LOG so the runner can say which exclusion was used.
"""

import json
import os
import re
from typing import NamedTuple

import schemathesis


# A NamedTuple rather than a dataclass: Schemathesis loads this file outside sys.modules, where
# dataclasses cannot resolve the module.
class Exclusion(NamedTuple):
    name: str
    # "METHOD /path" as the document lists it; None for every operation.
    operations: tuple[str, ...] | None
    # The problem's status and code.
    status: int
    code: str
    # For VALIDATION_FAILED: regular expressions every errors[].field and errors[].message match.
    field: str | None
    message: str | None
    reason: str


PROFILE_TARGETS = ("GET /profile", "PUT /profile", "PUT /profile/groups", "DELETE /profile/groups")
PROFILE_JSON = (
    "POST /profile",
    "PUT /profile",
    "PUT /admin/users/{subject}/plans",
    "PUT /admin/teams/{id}/plans",
    "PUT /admin/plans/{planName}",
)
DATA = (
    "GET /data/{collection}",
    "POST /data/{collection}",
    "GET /data/{collection}/count",
    "GET /data/{collection}/{indexName}/{indexValue}",
    "PUT /data/{collection}/{indexName}/{indexValue}",
    "DELETE /data/{collection}/{indexName}/{indexValue}",
    "POST /data/{collection}/index",
    "POST /data/{collection}/bulk",
    "PUT /data/{collection}",
    "DELETE /data/{collection}",
    "PATCH /data/{collection}/{indexName}/{indexValue}",
    "GET /data/{collection}/aggregate",
    "GET /data/{collection}/explain",
)

# A collection's access rules hold body filters (docs/data.md, "Access rules").
ACCESS = ("PUT /data/{collection}/access",)

# The change feed's live queries take a list's filter and fields (docs/events.md).
LIVE = ("GET /events", "GET /events/stream")

# The reads that take `q` (full-text search, docs/data.md "Searching with q").
SEARCH_READS = (
    "GET /data/{collection}",
    "GET /data/{collection}/count",
    "GET /data/{collection}/explain",
)

ITEM_WRITES = (
    "POST /data/{collection}",
    "PUT /data/{collection}/{indexName}/{indexValue}",
    "PUT /data/{collection}",
    "PATCH /data/{collection}/{indexName}/{indexValue}",
)

EXCLUSIONS: tuple[Exclusion, ...] = (
    Exclusion(
        name="collection-schema-refuses-items",
        operations=ITEM_WRITES,
        status=422,
        code="SCHEMA_VIOLATION",
        field=None,
        message=None,
        reason="A collection's JSON Schema (PUT /data/{collection}/schema, which the run also "
        "calls) is the tenant's own rule for its items: it is in the tenant's document "
        "(GET /data/openapi.json), not in the service's, so an item the service's document "
        "allows may break it.",
    ),
    Exclusion(
        name="schema-document-rules",
        operations=("PUT /data/{collection}/schema",),
        status=400,
        code="VALIDATION_FAILED",
        field=r"^schema(\..*)?$",
        message=r"^(the keyword .* is not supported|must be a schema |must be an (array|object)$"
        r"|must be a (string|JSON object)$|the format .* is not supported|only '.*' is supported"
        r"|must point inside the schema|the pattern cannot run in linear time|'.*' is managed by "
        r"the service|nests deeper than|must be at most \d+ bytes|schema is invalid|strict mode"
        r"|can't resolve reference|reference .* resolves to more than one schema)",
        reason="A collection schema is a JSON Schema (draft 2020-12) document, which the service "
        "checks against the meta-schema and its own limits (docs/data.md, \"Collection "
        "schemas\"); OpenAPI 3.0 cannot state the JSON Schema meta-schema, so the document "
        "describes the member as a free-form object.",
    ),
    Exclusion(
        name="clientId-with-accountId",
        operations=PROFILE_TARGETS + ("POST /api-keys",),
        status=400,
        code="VALIDATION_FAILED",
        field=r"^(clientId|accountId)$",
        message=r"^clientId and accountId must (be given together|both be non-empty)",
        reason="clientId and accountId name a sub profile together (both given, or both empty "
        "for the root profile); each alone is valid, and OpenAPI 3.0 cannot make one member "
        "or parameter require another.",
    ),
    Exclusion(
        name="publishable-key-members",
        operations=("POST /api-keys", "POST /teams/{id}/api-keys"),
        status=400,
        code="VALIDATION_FAILED",
        field=r"^(scopes|clientId|accountId|collections(\[\d+\])?|allowedOrigins(\[\d+\])?)$",
        message=r"^(is not for a publishable key|is only for a publishable key|must list at least "
        r"one collection name|must name at most \d+ collections|must be a collection name"
        r"|must hold 1 to \d+ origins|must be an origin as a browser sends it"
        r"|collections must be an object)",
        reason="`kind` decides which members a key takes: a publishable key needs `collections` "
        "as a list of names and `allowedOrigins`, and refuses `scopes`, `clientId` and "
        "`accountId`; another kind refuses `allowedOrigins` and takes `collections` as an object "
        "of patterns (docs/keys.md, \"Publishable keys\"). "
        "OpenAPI 3.0 cannot make one member's value decide which others are allowed. An origin "
        "must be exactly what a browser sends (lower case, no default port, no path), which the "
        "URL standard's parser decides, not a pattern the document could state.",
    ),
    Exclusion(
        name="cursor-names-sort-field",
        operations=("GET /data/{collection}", "GET /data/{collection}/explain", "GET /project"),
        status=400,
        code="VALIDATION_FAILED",
        field=r"^(after|before)\[.*\]$",
        message=r"^(must name (the|a) sort field|needs (after|before)\[|needs a value: the cursor )",
        reason="A keyset cursor after[f]/before[f] must name the field given in `sort`, and the "
        "id tie-breaker needs the sort field's cursor beside it; OpenAPI 3.0 cannot tie one "
        "parameter's presence or key to another parameter.",
    ),
    Exclusion(
        name="q-needs-search-configuration",
        operations=SEARCH_READS,
        status=400,
        code="SEARCH_NOT_CONFIGURED",
        field=r"^q$",
        message=r"^needs a search configuration of the collection$",
        reason="`q` searches a collection with a search configuration (PUT "
        "/data/{collection}/search); whether the collection has one is the service's state, "
        "not something the document can state of the parameter.",
    ),
    Exclusion(
        name="sort-and-fields-lists",
        operations=(
            "GET /data/{collection}",
            "GET /data/{collection}/{indexName}/{indexValue}",
            "GET /data/{collection}/explain",
        )
        + LIVE,
        status=400,
        code="VALIDATION_FAILED",
        field=r"^(sort|sortOrder|fields)$",
        message=r"^(names '.*' twice|_id is unique: no field can follow it|'.*' overlaps another "
        r"listed field|_id is always returned|must name at most \d+ fields|field path must be at "
        r"most \d+ characters|goes with a single unsigned sort field.*)$",
        reason="The paths of `sort` and `fields` must differ and not overlap, `_id` ends a sort, "
        "each path has at most 256 characters, and sortOrder goes with a single unsigned sort "
        "field; the document states the paths' form with a pattern, and a pattern cannot compare "
        "the items of a list with each other, count characters per item, or tie two parameters.",
    ),
    Exclusion(
        name="filter-operands",
        operations=DATA + LIVE,
        status=400,
        code="VALIDATION_FAILED",
        field=r"^(filter(\[.*\]|\..*)?|_createdAt|_updatedAt)$",
        message=r"^(must be an RFC 3339 timestamp.*|has \d+ conditions; at most \d+ are allowed"
        r"|must list at most \d+ values)$",
        reason="Conditions on _createdAt/_updatedAt take RFC 3339 timestamps, and a filter holds "
        "at most FILTER_MAX_CONDITIONS conditions over all its fields; the filter's fields are "
        "free-form keys, and OpenAPI 3.0 can neither give one key's value its own format nor "
        "count the operators of all keys together.",
    ),
    Exclusion(
        name="access-rule-filters",
        operations=ACCESS,
        status=400,
        code="VALIDATION_FAILED",
        field=r"^(sub\.(read|create|update|delete)|public\.read)\.filter(\..*)?$",
        message=r"^(must be an RFC 3339 timestamp.*|has \d+ conditions; at most \d+ are allowed"
        r"|must list at most \d+ values|'.*' is not a caller constant: .*)$",
        reason="A rule's filter is a body filter under the same rules as PUT /data/{collection}'s "
        "(see filter-operands: timestamps for _createdAt/_updatedAt, FILTER_MAX_CONDITIONS over "
        "all its fields), and a string value starting `$caller.` must be one of the caller's "
        "constants; the filter's fields are free-form keys, and OpenAPI 3.0 can neither give one "
        "key's value its own format, count the operators of all keys together, nor refuse a "
        "prefix of a string while allowing two whole values that start with it.",
    ),
    Exclusion(
        name="if-match-with-multi",
        operations=("PUT /data/{collection}", "DELETE /data/{collection}"),
        status=400,
        code="VALIDATION_FAILED",
        field=r"^If-Match$",
        message=r"^goes with a single-item write, not with multi: true$",
        reason="If-Match names one representation, so a write by filter takes it only without "
        "multi: true; OpenAPI 3.0 cannot tie a header to a member of the body.",
    ),
    Exclusion(
        name="aggregate-field-with-op",
        operations=("GET /data/{collection}/aggregate",),
        status=400,
        code="VALIDATION_FAILED",
        field=r"^field$",
        message=r"^(goes with sum, avg, min and max, not count|is required for op=\w+)$",
        reason="An aggregate's field is required by op=sum|avg|min|max and refused with "
        "op=count; OpenAPI 3.0 cannot make one query parameter depend on another's value.",
    ),
    Exclusion(
        name="live-query-parameters",
        operations=LIVE,
        status=400,
        code="VALIDATION_FAILED",
        field=r"^(collection|resource|type)$",
        message=r"^(is required with filter\[…\] and fields: a live query follows one collection"
        r"|must be item or collection with filter\[…\]|'(entered|left)' is a live query's: add "
        r"filter\[…\])$",
        reason="A live query (filter[…] or fields) follows the items of one collection: it needs "
        "collection, takes resource item or collection only, and type=entered|left needs a "
        "filter; OpenAPI 3.0 cannot make one query parameter require or restrict another.",
    ),
    Exclusion(
        name="on-conflict-needs-unique-field",
        operations=("POST /data/{collection}",),
        status=400,
        code="VALIDATION_FAILED",
        field=r"^onConflict$",
        message=r"^'return' needs uniqueField",
        reason="onConflict \"return\" finds the item by its uniqueField value, so it needs "
        "uniqueField; OpenAPI 3.0 cannot make one member require another.",
    ),
    Exclusion(
        name="unique-field-in-item",
        operations=("POST /data/{collection}",),
        status=400,
        code="VALIDATION_FAILED",
        field=r"^uniqueField$",
        message=r"^item has no field ",
        reason="uniqueField must name a field present in `item`; OpenAPI 3.0 cannot tie a "
        "member's value to the keys of another member.",
    ),
    Exclusion(
        name="free-form-keys",
        operations=DATA + PROFILE_JSON + LIVE + ACCESS,
        # Keys of items, values, filters and cursors; never a documented parameter or member.
        status=400,
        code="VALIDATION_FAILED",
        field=r"^(?!(sort|authField|uniqueField|indexName|field|name)$)",
        message=r"^(field (name|path) |segment |must not be empty$|is not a recognised parameter$"
        r"|is (set|managed) by the server$|'.*' is a reserved (name|key)$|keys )",
        reason="The names of a free-form object's members (item and values fields, filter, "
        "existsFilter, after and before keys, compound index fields; the keys of profile "
        "settings, metadata, userMetadata and plan metadata) follow the key rules of "
        "docs/data.md and docs/profiles.md; OpenAPI 3.0 has no propertyNames to state a rule for the keys "
        "of an object, so generated objects carry names the service refuses. The same rules "
        "are in the document wherever a name is a value (authField, uniqueField, sort, field, "
        "indexName) and are checked there.",
    ),
    Exclusion(
        name="free-form-budgets",
        operations=DATA + PROFILE_JSON + ACCESS,
        status=400,
        code="VALIDATION_FAILED",
        field=r"^(?!(sort|authField|uniqueField|indexName|field|name)$)",
        message=r"^((is )?nest(ed|ing) deeper than \d+ levels|is \d+ bytes serialized; the limit "
        r"is \d+|the stored result would be \d+ bytes serialized; the limit is \d+)$",
        reason="Free-form values are bounded in nesting depth and serialized size "
        "(DATA_MAX_DEPTH, PROFILE_JSON_MAX_DEPTH, PROFILE_JSON_MAX_BYTES; docs/data.md, "
        "docs/profiles.md); the document describes such values with recursive schemas, and "
        "OpenAPI 3.0 cannot bound the depth or the serialized size of a recursive value.",
    ),
    Exclusion(
        name="nested-values-beyond-generation",
        operations=DATA + PROFILE_JSON + ACCESS,
        status=400,
        code="VALIDATION_FAILED",
        # Two or more levels below the member: item.a.b, item.a[0], settings["a"]["b"].
        # A segment may be empty: the generated key itself can be "" (refused on its own too).
        # A generated key may hold "[" itself: a dotted segment is anything up to the next dot.
        field=r'^(\d+\.)?[A-Za-z]+(\["(?:[^"\\]|\\.)*"\]|\.[^.]*|\[\d+\]){2,}$',
        message=r"^(numbers must be integers|integers must be within .*|arrays are not allowed .*"
        r"|null is only allowed in updates|values must be strings|not a JSON value"
        r"|must not hold an array directly inside an array .*)$",
        reason="The document states the value rules of free-form members with recursive schemas "
        "(ProfileJsonValue, DataValue). Schemathesis follows a recursive $ref only a little way "
        "and generates any JSON below that, so its values two or more levels down can break "
        "rules the document does state; at the first level they are checked like any other.",
    ),
    Exclusion(
        name="plan-until-after-since",
        operations=("PUT /admin/users/{subject}/plans", "PUT /admin/teams/{id}/plans"),
        status=400,
        code="VALIDATION_FAILED",
        field=r"^\d+\.until$",
        message=r"^until must not be before since$",
        reason="A plan's until must not be before its since; OpenAPI 3.0 cannot compare two "
        "members of one object.",
    ),
    Exclusion(
        name="usage-date-range",
        operations=("GET /me/usage", "GET /admin/usage"),
        status=400,
        code="VALIDATION_FAILED",
        field=r"^(from|to)$",
        message=r"^(must not be after to|must be at most 366 days after from \(both included\))$",
        reason="A usage range's from must not be after its to, and spans at most 366 days; "
        "OpenAPI 3.0 cannot compare two query parameters.",
    ),
    Exclusion(
        name="expiry-in-the-future",
        operations=("POST /api-keys",),
        status=400,
        code="VALIDATION_FAILED",
        field=r"^expiresAt$",
        message=r"^expiresAt must be in the future$",
        reason="A new key's expiresAt must be later than the time of the request; a schema "
        "states formats and bounds, not a bound that moves with the clock.",
    ),
    Exclusion(
        name="key-collection-patterns",
        operations=("POST /api-keys", "POST /teams/{id}/api-keys"),
        status=400,
        code="VALIDATION_FAILED",
        field=r"^collections(\..*)?$",
        message=r"^(must be a collection name|must name at least one collection or pattern$"
        r"|must have at most \d+ entries)",
        reason="A key's collections are named by collection names or prefixes with one trailing "
        "*, at most API_KEY_MAX_COLLECTIONS of them; OpenAPI 3.0 has no propertyNames, and the "
        "bound is configuration.",
    ),
    Exclusion(
        name="key-address-ranges",
        operations=("POST /api-keys", "POST /teams/{id}/api-keys"),
        status=400,
        code="VALIDATION_FAILED",
        field=r"^allowedIps(\[\d+\])?$",
        message=r"^(must be an IPv4 or IPv6 address or CIDR|must hold 1 to \d+ addresses)",
        reason="A key's allowedIps are IPv4/IPv6 addresses or CIDRs, 1 to "
        "API_KEY_MAX_ALLOWED_IPS of them; the document states strings, and the bound is "
        "configuration.",
    ),
    Exclusion(
        name="if-match-names-another-version",
        operations=None,
        status=412,
        code="PRECONDITION_FAILED",
        field=None,
        message=None,
        reason="A well-formed If-Match that names another version than the resource's current "
        "one (or any version of a resource that does not exist) is refused by design; which "
        "version is current is the resource's state, not something the request's schema can say.",
    ),
    Exclusion(
        name="erasure-confirmation",
        operations=("DELETE /profile",),
        status=400,
        code="VALIDATION_FAILED",
        field=r"^confirm$",
        message=r"^must be your subject, to confirm the erasure$",
        reason="DELETE /profile erases the caller's account only when `confirm` is the caller's "
        "own subject: a value fixed by the key that sends the request, which a schema cannot "
        "name.",
    ),
    Exclusion(
        name="auth-field-with-purge",
        operations=("DELETE /profile/{accountId}",),
        status=400,
        code="VALIDATION_FAILED",
        field=r"^authField$",
        message=r"^goes with purgeData=true$",
        reason="authField names the owner field of the items purgeData=true deletes; without "
        "purgeData it would mean nothing, and OpenAPI 3.0 cannot make one parameter require "
        "another's value.",
    ),
    Exclusion(
        name="region-of-the-deployment",
        operations=("POST /admin/users", "POST /admin/teams"),
        status=400,
        code="UNKNOWN_REGION",
        field=r"^region$",
        message=r"^must be one of: ",
        reason="A new tenant's region must be one that the deployment's DATA_CLUSTERS lists; "
        "which regions those are is configuration, not something the published schema can "
        "name (the document is the same for every deployment).",
    ),
    Exclusion(
        name="issuer-of-the-deployment",
        operations=("PUT /admin/users/{subject}/identities",),
        status=400,
        code="UNKNOWN_ISSUER",
        field=None,
        message=None,
        reason="An identity's issuer must be one that the deployment's OIDC_ISSUERS lists; which "
        "issuers those are is configuration, not something the published schema can name (the "
        "document is the same for every deployment).",
    ),
    Exclusion(
        name="cluster-of-the-deployment",
        operations=("POST /admin/tenants/{kind}/{id}/move",),
        status=400,
        code="UNKNOWN_CLUSTER",
        field=r"^cluster$",
        message=r"^must be one of: ",
        reason="A move's target must be a cluster that the deployment's DATA_CLUSTERS lists; "
        "which clusters those are is configuration, not something the published schema can "
        "name (the document is the same for every deployment).",
    ),
    Exclusion(
        name="link-within-the-deployment-maximum",
        operations=("POST /files/{id}/links",),
        status=400,
        code="VALIDATION_FAILED",
        field=r"^expiresInSeconds$",
        message=r"^must not exceed FILE_LINK_MAX_SECONDS \(\d+\)$",
        reason="A signed link lives at most FILE_LINK_MAX_SECONDS, which is configuration; the "
        "document states the largest value any deployment may allow (the document is the same "
        "for every deployment).",
    ),
    Exclusion(
        name="expiry-within-the-deployment-maximum",
        operations=("PUT /data/{collection}/expiry",),
        status=400,
        code="VALIDATION_FAILED",
        field=r"^afterSeconds$",
        message=r"^must not be greater than \d+$",
        reason="An expiry rule's afterSeconds is at most EXPIRY_MAX_SECONDS, which is "
        "configuration; the document states the largest value any deployment may allow (the "
        "document is the same for every deployment).",
    ),
    Exclusion(
        name="idempotency-key-used-before",
        operations=None,
        status=422,
        code="IDEMPOTENCY_KEY_REUSED",
        field=None,
        message=None,
        reason="An Idempotency-Key that an earlier, different request used is refused by design "
        "(generated requests reuse the document's example key); whether a key was used is the "
        "service's state, not something the request's schema can say.",
    ),
)


def _label(case: schemathesis.Case) -> str:
    return f"{case.operation.method.upper()} {case.operation.path}"


def _problem(response: schemathesis.Response) -> dict | None:
    try:
        problem = response.json()
    except ValueError:
        return None
    return problem if isinstance(problem, dict) else None


def _applies(exclusion: Exclusion, label: str, problem: dict, status: int) -> bool:
    return (
        (exclusion.operations is None or label in exclusion.operations)
        and exclusion.status == status
        and exclusion.code == problem.get("code")
    )


def _error_matches(exclusion: Exclusion, error: object) -> bool:
    return (
        isinstance(error, dict)
        and exclusion.field is not None
        and exclusion.message is not None
        # DOTALL: a generated key or value may hold a line break, which `.` must match too.
        and re.search(exclusion.field, str(error.get("field", "")), re.DOTALL) is not None
        and re.search(exclusion.message, str(error.get("message", "")), re.DOTALL) is not None
    )


def _used(label: str, response: schemathesis.Response) -> set[str] | None:
    """The exclusions that explain the whole response, or None when something is left over."""
    problem = _problem(response)
    if problem is None:
        return None
    applicable = [e for e in EXCLUSIONS if _applies(e, label, problem, response.status_code)]
    for exclusion in applicable:
        if exclusion.field is None:
            return {exclusion.name}
    errors = problem.get("errors")
    if not isinstance(errors, list) or not errors:
        return None
    used: set[str] = set()
    for error in errors:
        match = next((e for e in applicable if _error_matches(e, error)), None)
        if match is None:
            return None
        used.add(match.name)
    return used


# DELETE /data/{c}/index removes the index its body names; GET /data/{c}/index lists the indexes
# the collection still has. The paths are equal, so a stateful sequence "create an index, delete
# it, list the indexes" reads as a deleted resource still answering (ST301): it is the list.
INDEX_LIST_AFTER_INDEX_DELETE = re.compile(r"DELETE /data/[^/` ]+/index`?$")
INDEX_LIST_REASON = "index-delete-then-index-list"


def _index_list_after_delete(failure, case) -> bool:
    freed = str(getattr(failure, "free", "") or "") or str(getattr(failure, "message", ""))
    return (
        failure.code == "ST301"
        and _label(case) == "GET /data/{collection}/index"
        and INDEX_LIST_AFTER_INDEX_DELETE.search(freed.strip()) is not None
    )


# POST /import answers a line that is not a valid record with that line's own 4xx result, inside
# a 200 (docs/data.md: a malformed line does not stop the lines after it). A "schema-violating
# request accepted" (ST201) there is the import refusing every line, each on its own result line.
IMPORT_REFUSED_PER_LINE = "import-refuses-lines-one-by-one"


def _import_refused_per_line(failure, case, response) -> bool:
    if failure.code != "ST201" or _label(case) != "POST /import" or response.status_code != 200:
        return False
    lines = [json.loads(line) for line in response.text.split("\n") if line]
    results = [line for line in lines if line.get("type") == "result"]
    return (
        len(results) > 0
        and lines[-1].get("type") == "totals"
        and all(int(line.get("status", 0)) >= 400 for line in results)
    )


@schemathesis.hook
def filter_failure(context, failure, case, response) -> bool:
    """Keep every failure except a refusal that only the rules listed above explain."""
    if _index_list_after_delete(failure, case):
        used = {INDEX_LIST_REASON}
    elif _import_refused_per_line(failure, case, response):
        used = {IMPORT_REFUSED_PER_LINE}
    elif failure.code != "ST202":
        return True
    else:
        used = _used(_label(case), response)
    if used is None:
        return True
    log = os.environ.get("CONTRACT_EXCLUSIONS_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as file:
            for name in sorted(used):
                file.write(json.dumps({"exclusion": name, "operation": _label(case)}) + "\n")
    return False


# X-Team belongs to the root run only (see the module docstring).
TEAM_HEADER = "X-Team"


LONG_WAIT = re.compile(r"^([2-9]|[12][0-9]|30)$")


@schemathesis.hook
def map_query(context, query):
    """Sends a valid long-poll wait above one second as one second (see the module docstring)."""
    if isinstance(query, dict) and isinstance(query.get("wait"), str):
        if LONG_WAIT.match(query["wait"]):
            query["wait"] = "1"
    return query


@schemathesis.hook
def before_load_schema(context, raw_schema: dict) -> None:
    """Drops the X-Team header parameter unless the run is root's."""
    if os.environ.get("CONTRACT_PRINCIPAL") == "root":
        return
    for item in raw_schema.get("paths", {}).values():
        for operation in item.values():
            if isinstance(operation, dict) and isinstance(operation.get("parameters"), list):
                operation["parameters"] = [
                    parameter
                    for parameter in operation["parameters"]
                    if not (
                        isinstance(parameter, dict)
                        and parameter.get("in") == "header"
                        and parameter.get("name") == TEAM_HEADER
                    )
                ]


@schemathesis.serializer("application/x-ndjson")
def ndjson_body(ctx, value) -> bytes:
    """A generated record as one NDJSON line."""
    return (json.dumps(value, ensure_ascii=False) + "\n").encode("utf-8")


@schemathesis.deserializer("application/x-ndjson")
def ndjson_first_line(ctx, response):
    """The first line of an NDJSON response (a manifest, or an import's first result)."""
    text = response.content.decode("utf-8")
    first = text.split("\n", 1)[0]
    return json.loads(first) if first else None
