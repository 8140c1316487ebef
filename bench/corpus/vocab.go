package corpus

// The vocabulary of the generated corpus: business domains with their
// resources, the verbs that tools apply to them, and field templates whose
// constraints and sample values are taken from the kind of tool APIs that
// models call in practice.

type domain struct {
	name  string
	title string
	about string
	nouns []string
}

var domains = []domain{
	{"billing", "Billing", "Invoices, payments and subscriptions for customer accounts", []string{"invoice", "payment", "refund", "subscription", "customer", "credit_note", "tax_rate", "coupon"}},
	{"inventory", "Inventory", "Stock levels, warehouses and transfers between them", []string{"item", "warehouse", "stock_level", "transfer", "supplier", "purchase_order", "bin"}},
	{"calendar", "Calendar", "Calendars, events and meeting rooms of the organisation", []string{"event", "attendee", "calendar", "reminder", "room", "availability"}},
	{"crm", "CRM", "Contacts, leads and deals tracked by the sales team", []string{"contact", "lead", "deal", "account", "note", "activity", "pipeline"}},
	{"support", "Support", "Customer support tickets, macros and service levels", []string{"ticket", "comment", "macro", "agent", "sla_policy", "satisfaction_rating"}},
	{"weather", "Weather", "Forecasts, observations and alerts from the national weather service", []string{"forecast", "alert", "observation", "station", "radar_image"}},
	{"search", "Search", "Full-text search over indexed documents", []string{"document", "index", "synonym", "query_rule", "crawl"}},
	{"storage", "Storage", "Buckets and objects in the object store", []string{"bucket", "object", "upload", "lifecycle_rule", "access_grant"}},
	{"deploy", "Deploy", "Releases, environments and pipelines of the delivery platform", []string{"release", "environment", "pipeline", "artifact", "rollback", "feature_flag"}},
	{"people", "People", "Employees, time off and reviews in the HR system", []string{"employee", "time_off", "position", "review", "team"}},
	{"shipping", "Shipping", "Shipments, labels and carrier rates", []string{"shipment", "label", "carrier", "rate", "pickup", "return"}},
	{"analytics", "Analytics", "Reports, metrics and dashboards over product events", []string{"report", "metric", "dashboard", "segment", "funnel"}},
	{"messaging", "Messaging", "Messages, channels and templates for customer communication", []string{"message", "channel", "thread", "template", "contact_list"}},
	{"identity", "Identity", "Users, groups, roles and credentials of the directory", []string{"user", "group", "role", "session", "api_key", "invitation"}},
	{"catalog", "Product catalog", "Products, variants and prices offered in the shop", []string{"product", "variant", "category", "price", "collection"}},
	{"maps", "Maps", "Places, routes and geocoding", []string{"place", "route", "geocode", "distance_matrix", "isochrone"}},
	{"docs", "Documents", "Shared documents, folders and their permissions", []string{"file", "folder", "permission", "revision", "share_link"}},
	{"monitoring", "Monitoring", "Alerts, incidents and uptime checks of production systems", []string{"incident", "alert_rule", "uptime_check", "on_call_shift", "status_page"}},
}

// A verb is what a tool does to a resource.
type verb struct {
	name  string
	title string // "List {nouns}"
	desc  string // the first sentence of the tool's description
	// fields are the templates that a tool with this verb always takes.
	fields []string
	// pool are the templates that it may take besides.
	pool        []string
	readOnly    bool
	destructive bool
	idempotent  bool
}

var verbs = []verb{
	{"list", "List {nouns}", "List the {nouns} that match the given filters, newest first.",
		nil, []string{"limit", "cursor", "sort_by", "sort_order", "status", "created_after", "created_before", "include_archived", "tags", "region", "page_size", "owner_email"}, true, false, true},
	{"get", "Get a {noun}", "Fetch one {noun} by its identifier, with its current state.",
		[]string{"{noun}_id"}, []string{"expand", "include_archived", "locale", "timezone"}, true, false, true},
	{"search", "Search {nouns}", "Search {nouns} by free text and filters, ranked by relevance.",
		[]string{"query"}, []string{"limit", "cursor", "locale", "tags", "status", "min_score", "created_after", "region", "latitude", "longitude", "radius_m"}, true, false, true},
	{"create", "Create a {noun}", "Create a new {noun} and return it with its generated identifier.",
		[]string{"name"}, []string{"note", "tags", "email", "currency", "amount", "quantity", "priority", "start_date", "website", "phone", "country_code", "sku", "slug", "color", "idempotency_key", "notify", "dry_run", "weight_kg"}, false, false, false},
	{"update", "Update a {noun}", "Update the given attributes of an existing {noun}; attributes left out keep their value.",
		[]string{"{noun}_id"}, []string{"name", "note", "tags", "status", "priority", "email", "phone", "amount", "discount_rate", "start_date", "color", "notify", "threshold"}, false, false, true},
	{"delete", "Delete a {noun}", "Delete a {noun} permanently. This cannot be undone.",
		[]string{"{noun}_id"}, []string{"force", "dry_run", "reason", "notify"}, false, true, true},
	{"cancel", "Cancel a {noun}", "Cancel a {noun} that has not completed yet.",
		[]string{"{noun}_id"}, []string{"reason", "notify", "refund_amount", "effective_date", "idempotency_key"}, false, true, true},
	{"archive", "Archive a {noun}", "Archive a {noun} so that it no longer appears in lists; it can be restored later.",
		[]string{"{noun}_id"}, []string{"reason", "notify"}, false, false, true},
	{"restore", "Restore a {noun}", "Restore an archived {noun} to its previous state.",
		[]string{"{noun}_id"}, []string{"notify"}, false, false, true},
	{"export", "Export {nouns}", "Export {nouns} as a downloadable file and return a link to it.",
		[]string{"export_format"}, []string{"created_after", "created_before", "status", "fields", "timezone", "include_archived", "callback_url"}, true, false, false},
	{"count", "Count {nouns}", "Count the {nouns} that match the given filters, without returning them.",
		nil, []string{"status", "created_after", "created_before", "tags", "region", "owner_email"}, true, false, true},
	{"preview", "Preview a {noun}", "Render a preview of a {noun} without saving it.",
		[]string{"{noun}_id"}, []string{"locale", "timezone", "width_px", "scale", "hours"}, true, false, true},
	{"sync", "Sync {nouns}", "Start a synchronisation of {nouns} with the upstream system and report what changed.",
		nil, []string{"since", "dry_run", "batch_size", "retries", "timeout", "source_host", "source_ip", "ids", "weights", "flags"}, false, false, false},
}

// A kv is one constraint of a field, in the order that it is written.
type kv struct {
	key string
	val any
}

// A fieldTmpl is a kind of field that tools take or return. Its samples
// fit every constraint, so dropping constraints keeps them valid.
type fieldTmpl struct {
	name    string
	typ     string
	items   string
	desc    string
	cons    []kv
	samples []any
	// required is the probability that a request field is required.
	required float64
}

func c(pairs ...any) []kv {
	out := make([]kv, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, kv{pairs[i].(string), pairs[i+1]})
	}
	return out
}

func l(xs ...any) []any { return xs }

var fieldTmpls = []fieldTmpl{
	// Strings.
	{"{noun}_id", "string", "", "Identifier of the {noun}, as returned when it was created", c("minLength", 3, "maxLength", 64, "pattern", `^[a-z]{2,4}_[A-Za-z0-9]{8,24}$`), l("obj_8f3K2mQp9x", "id_A1b2C3d4E5f6"), 1},
	{"query", "string", "", "Free-text search query; matches names, descriptions and tags", c("minLength", 1, "maxLength", 500), l("overdue invoices", "berlin office", "q3 report"), 1},
	{"cursor", "string", "", "Opaque pagination cursor, returned as next_cursor by the previous call; leave it out to start from the first page", c("maxLength", 256, "pattern", `^[A-Za-z0-9+/=_-]*$`), l("eyJvZmZzZXQiOjUwfQ==", "c2Vjb25kLXBhZ2U"), 0},
	{"name", "string", "", "Display name of the {noun}, shown to end users", c("minLength", 1, "maxLength", 200), l("Quarterly plan", "Main warehouse", "Ana Lima"), 0.9},
	{"note", "string", "", "Free-form internal note; it is never shown to customers", c("maxLength", 2000), l("Customer asked for a callback on Monday", "Imported from the legacy system"), 0.1},
	{"reason", "string", "", "Why this is done, recorded in the audit log", c("minLength", 3, "maxLength", 500), l("Duplicate entry", "Requested by the customer"), 0.4},
	{"email", "string", "", "Email address of the contact person", c("format", "email", "maxLength", 254), l("ana.lima@example.com", "ops@example.org"), 0.5},
	{"owner_email", "string", "", "Only return {nouns} owned by the user with this email address", c("format", "email", "maxLength", 254), l("owner@example.com"), 0},
	{"status", "string", "", "Lifecycle status of the {noun}", c("enum", l("active", "paused", "archived", "draft")), l("active", "paused"), 0.2},
	{"region", "string", "", "Data region that the request is served from", c("enum", l("us-east-1", "eu-west-1", "ap-southeast-2")), l("eu-west-1", "us-east-1"), 0.1},
	{"currency", "string", "", "Three-letter ISO 4217 currency code, upper case", c("minLength", 3, "maxLength", 3, "pattern", `^[A-Z]{3}$`), l("EUR", "USD", "JPY"), 0.5},
	{"locale", "string", "", "BCP 47 language tag for texts in the result, such as en-US or de", c("maxLength", 35, "pattern", `^[a-z]{2,3}(-[A-Z]{2})?$`), l("en-US", "de", "pt-BR"), 0},
	{"timezone", "string", "", "IANA time zone that dates in the result are expressed in, such as Europe/Berlin", c("maxLength", 64, "pattern", `^[A-Za-z_]+(/[A-Za-z_]+)*$`), l("Europe/Berlin", "America/New_York", "UTC"), 0},
	{"start_date", "string", "", "First day on which the {noun} takes effect", c("format", "date"), l("2025-03-01", "2026-01-15"), 0.5},
	{"effective_date", "string", "", "Day from which the change applies; today when left out", c("format", "date"), l("2025-07-01"), 0},
	{"created_after", "string", "", "Only include {nouns} created at or after this instant (RFC 3339)", c("format", "date-time"), l("2025-01-15T09:30:00Z", "2025-06-01T00:00:00+02:00"), 0},
	{"created_before", "string", "", "Only include {nouns} created before this instant (RFC 3339)", c("format", "date-time"), l("2025-12-31T23:59:59Z"), 0},
	{"since", "string", "", "Only sync changes made after this instant (RFC 3339)", c("format", "date-time"), l("2025-05-20T12:00:00Z"), 0.3},
	{"timeout", "string", "", "How long to wait before giving up, as an ISO 8601 duration", c("format", "duration"), l("PT30S", "PT5M"), 0},
	{"website", "string", "", "Public web page of the {noun}", c("format", "uri", "maxLength", 2048), l("https://example.com/about", "https://shop.example.org/"), 0},
	{"callback_url", "string", "", "URL that is called with the result once the job finishes", c("format", "uri", "maxLength", 2048), l("https://hooks.example.com/toolc/done"), 0},
	{"source_host", "string", "", "Host name of the upstream system to sync from", c("format", "hostname", "maxLength", 253), l("api.example.com", "erp.internal.example.net"), 0.2},
	{"source_ip", "string", "", "IPv4 address of the upstream system, when it has no host name", c("format", "ipv4"), l("192.0.2.10", "198.51.100.7"), 0},
	{"idempotency_key", "string", "", "Client-chosen key that makes retries safe: a second request with the same key returns the first result", c("format", "uuid"), l("3f2b8c1e-9d4a-4e6b-8f0a-1c2d3e4f5a6b"), 0},
	{"phone", "string", "", "Phone number in E.164 format, with the country code", c("minLength", 8, "maxLength", 16, "pattern", `^\+[1-9][0-9]{6,14}$`), l("+4930123456", "+14155550123"), 0},
	{"country_code", "string", "", "Two-letter ISO 3166-1 country code", c("minLength", 2, "maxLength", 2, "pattern", `^[A-Z]{2}$`), l("DE", "US", "BR"), 0.3},
	{"sku", "string", "", "Stock keeping unit of the {noun}", c("minLength", 6, "maxLength", 19, "pattern", `^[A-Z0-9]{4,12}-[A-Z0-9]{1,6}$`), l("WDG1234-BLK", "TSHIRT-M"), 0.4},
	{"slug", "string", "", "URL-safe short name of the {noun}, unique within the account", c("minLength", 1, "maxLength", 80, "pattern", `^[a-z0-9]+(?:-[a-z0-9]+)*$`), l("spring-sale", "team-berlin"), 0.2},
	{"color", "string", "", "Colour used for the {noun} in the user interface, as a hex triplet", c("pattern", `^#[0-9a-fA-F]{6}$`), l("#1A73E8", "#ff9900"), 0},
	{"sort_by", "string", "", "Attribute to sort the {nouns} by", c("enum", l("created_at", "updated_at", "name")), l("created_at", "name"), 0},
	{"sort_order", "string", "", "Sort direction", c("enum", l("asc", "desc")), l("desc", "asc"), 0},
	{"expand", "string", "", "Related object to embed in the result instead of its identifier", c("enum", l("owner", "line_items", "history")), l("owner"), 0},
	{"export_format", "string", "", "File format of the export", c("enum", l("csv", "json", "xlsx", "parquet")), l("csv", "json"), 0.8},

	// Integers.
	{"limit", "integer", "", "Maximum number of {nouns} to return in one page", c("minimum", 1, "maximum", 100), l(20, 50, 10), 0},
	{"page_size", "integer", "", "Number of {nouns} per page", c("enum", l(10, 25, 50, 100)), l(25, 50), 0},
	{"quantity", "integer", "", "Number of units", c("minimum", 1, "maximum", 10000), l(1, 5, 12), 0.7},
	{"priority", "integer", "", "Priority from 1 (highest) to 5 (lowest)", c("minimum", 1, "maximum", 5), l(3, 1), 0.2},
	{"retries", "integer", "", "How often to retry a failed batch before giving up", c("minimum", 0, "maximum", 10), l(3, 0), 0},
	{"batch_size", "integer", "", "Number of records sent upstream per request", c("minimum", 1, "maximum", 1000), l(100, 250), 0},
	{"radius_m", "integer", "", "Search radius around the given point, in metres", c("exclusiveMinimum", 0, "maximum", 50000), l(500, 2000), 0},
	{"width_px", "integer", "", "Width of the rendered preview in pixels", c("minimum", 64, "maximum", 4096), l(800, 1280), 0},
	{"hours", "array", "integer", "Hours of the day (0 to 23) to include", c("maxItems", 24, "uniqueItems", true), l(l(9, 12, 18), l(0)), 0},

	// Numbers.
	{"amount", "number", "", "Amount in the currency's major unit, such as 19.99", c("minimum", 0, "maximum", 1000000), l(19.99, 250.0, 0.5), 0.6},
	{"refund_amount", "number", "", "Amount to refund; the full amount when left out", c("exclusiveMinimum", 0), l(10.5, 99.0), 0},
	{"discount_rate", "number", "", "Discount as a fraction between 0 and 1", c("minimum", 0, "maximum", 1), l(0.15, 0.5), 0},
	{"threshold", "number", "", "Value above which an alert is raised", c("exclusiveMinimum", 0, "exclusiveMaximum", 1000), l(0.75, 90.0), 0.3},
	{"min_score", "number", "", "Only return results whose relevance score is at least this", c("minimum", 0, "maximum", 1), l(0.5, 0.8), 0},
	{"latitude", "number", "", "Latitude of the centre point in decimal degrees", c("minimum", -90, "maximum", 90), l(52.52, -33.87), 0.3},
	{"longitude", "number", "", "Longitude of the centre point in decimal degrees", c("minimum", -180, "maximum", 180), l(13.405, 151.21), 0.3},
	{"weight_kg", "number", "", "Gross weight in kilograms", c("exclusiveMinimum", 0, "maximum", 1000), l(2.4, 0.25), 0.3},
	{"scale", "number", "", "Zoom factor of the preview", c("minimum", 0.25, "maximum", 4), l(1.0, 2.0, 0.5), 0},

	// Booleans.
	{"include_archived", "boolean", "", "Whether archived {nouns} are included", nil, l(false, true), 0},
	{"dry_run", "boolean", "", "Validate the request and report what would change, without changing anything", nil, l(false, true), 0},
	{"notify", "boolean", "", "Whether the people involved are notified by email", nil, l(true, false), 0},
	{"force", "boolean", "", "Delete even if other objects still refer to the {noun}", nil, l(false, true), 0},

	// Arrays.
	{"tags", "array", "string", "Labels attached to the {noun}, used for filtering", c("maxItems", 20, "uniqueItems", true), l(l("urgent", "vip"), l("q3")), 0},
	{"fields", "array", "string", "Columns to include in the export; all columns when left out", c("minItems", 1, "maxItems", 50), l(l("id", "name", "created_at")), 0},
	{"ids", "array", "string", "Identifiers of the records to sync; all records when left out", c("minItems", 1, "maxItems", 100), l(l("rec_0001", "rec_0002")), 0},
	{"weights", "array", "number", "Relative weights of the sync sources, in the order listed", c("maxItems", 10), l(l(0.5, 1.25)), 0},
	{"flags", "array", "boolean", "Per-source switches, in the order that the sources are listed", c("maxItems", 8), l(l(true, false, true)), 0},
}

// Response fields: what tools return.
var responseTmpls = []fieldTmpl{
	{"{noun}_id", "string", "", "Identifier of the {noun}", c("pattern", `^[a-z]{2,4}_[A-Za-z0-9]{8,24}$`), nil, 1},
	{"status", "string", "", "Lifecycle status of the {noun} after the call", c("enum", l("active", "paused", "archived", "draft")), nil, 1},
	{"created_at", "string", "", "When the {noun} was created (RFC 3339)", c("format", "date-time"), nil, 1},
	{"updated_at", "string", "", "When the {noun} last changed (RFC 3339)", c("format", "date-time"), nil, 1},
	{"total_count", "integer", "", "Number of {nouns} that match, across all pages", c("minimum", 0), nil, 1},
	{"next_cursor", "string", "", "Cursor for the next page; absent on the last page", nil, nil, 0},
	{"url", "string", "", "Link to the {noun} in the web application", c("format", "uri"), nil, 1},
	{"summary", "string", "", "One-line human-readable summary of the result", nil, nil, 1},
	{"amount", "number", "", "Amount in the currency's major unit", nil, nil, 1},
	{"names", "array", "string", "Display names of the {nouns} in the result", nil, nil, 1},
	{"changed", "boolean", "", "Whether anything changed", nil, nil, 1},
	{"warnings", "array", "string", "Problems that did not stop the call", c("maxItems", 50), nil, 0},
}

// Sentences that lengthen descriptions, the way real contracts explain
// themselves to a model.
var toolSentences = []string{
	"Use it when the user refers to a {noun} by name or identifier.",
	"Results are paginated; pass the returned cursor to fetch the next page.",
	"The call is rate limited to 10 requests per second per account.",
	"Prefer this over a search when the identifier is known.",
	"Only {nouns} that the caller has access to are considered.",
	"Changes are visible to other users within a few seconds.",
	"Times in the result are in UTC unless a time zone is given.",
	"Deleted {nouns} are never returned.",
	"Ask the user for confirmation before calling it on their behalf.",
	"The result includes a link that the user can open in the web application.",
	"It returns an error when the {noun} does not exist or was archived.",
	"Amounts are in the currency of the account unless stated otherwise.",
}

var fieldSentences = []string{
	"Leave it out to use the account default.",
	"Values are case-sensitive.",
	"It is validated before anything changes.",
	"The model should ask the user when it is unsure.",
	"It is stored as given and shown in the audit log.",
}
