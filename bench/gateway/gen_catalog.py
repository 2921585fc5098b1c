#!/usr/bin/env python3
"""Generate the benchmark catalogue: 16 MCP servers, 500 tools, named and
described the way real servers of these products describe theirs, with the
heavy overlap real catalogues have (issues in GitHub, GitLab, Jira and
Linear; messages in Slack, Gmail and Discord...). Deterministic.

Writes catalog.json ({server: [tool, ...]}) and queries_description.json
(one query per tool, phrased like its description: lower-case, articles
dropped, some verbs swapped for a synonym, some trailing clauses cut).
"""

import json
import random
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent

# server -> (product phrase, container phrase, [(resource, plural, [verbs], params, extra)])
V_ALL = ["list", "get", "create", "update", "delete"]
SERVERS = {
    "github": ("GitHub", "a GitHub repository", [
        ("issue", "issues", V_ALL + ["search", "close"], ["owner", "repo", "title", "body", "labels"], "with title, body and labels"),
        ("pull_request", "pull requests", ["list", "get", "create", "update", "merge", "review"], ["owner", "repo", "head", "base", "title"], "between two branches"),
        ("branch", "branches", ["list", "create", "delete"], ["owner", "repo", "branch", "from_branch"], ""),
        ("commit", "commits", ["list", "get"], ["owner", "repo", "sha", "path"], "with author and message"),
        ("release", "releases", ["list", "create"], ["owner", "repo", "tag_name", "name"], "from a tag"),
        ("workflow_run", "workflow runs", ["list", "get", "rerun", "cancel"], ["owner", "repo", "run_id", "workflow_id"], "of GitHub Actions"),
        ("repository", "repositories", ["search", "create", "fork"], ["query", "name", "private"], ""),
        ("file_contents", "file contents", ["get", "update"], ["owner", "repo", "path", "content", "message"], "at a path in the repository"),
        ("issue_comment", "issue comments", ["create", "list"], ["owner", "repo", "issue_number", "body"], "on an issue or pull request"),
    ]),
    "gitlab": ("GitLab", "a GitLab project", [
        ("issue", "issues", ["list", "get", "create", "update"], ["project_id", "title", "description", "labels"], ""),
        ("merge_request", "merge requests", ["list", "get", "create", "merge", "approve"], ["project_id", "source_branch", "target_branch", "title"], ""),
        ("pipeline", "CI/CD pipelines", ["list", "get", "retry", "cancel"], ["project_id", "pipeline_id", "ref"], ""),
        ("job_log", "job logs", ["get"], ["project_id", "job_id"], "of a CI job"),
        ("project", "projects", ["search", "get"], ["query", "project_id"], ""),
        ("wiki_page", "wiki pages", ["list", "create"], ["project_id", "title", "content"], ""),
    ]),
    "jira": ("Jira", "a Jira project", [
        ("issue", "issues", V_ALL + ["search", "transition", "assign"], ["project_key", "summary", "description", "issue_type", "assignee", "jql"], "such as a bug, task or story"),
        ("sprint", "sprints", ["list", "get", "create"], ["board_id", "sprint_id", "name"], "of a Scrum board"),
        ("board", "boards", ["list", "get"], ["board_id", "project_key"], ""),
        ("comment", "comments", ["create", "list"], ["issue_key", "body"], "on a Jira issue"),
        ("worklog", "worklogs", ["create"], ["issue_key", "time_spent"], "time spent on an issue"),
        ("project", "projects", ["list", "get"], ["project_key"], ""),
    ]),
    "linear": ("Linear", "a Linear team", [
        ("issue", "issues", V_ALL + ["search"], ["team_id", "title", "description", "priority", "state"], "with priority and state"),
        ("cycle", "cycles", ["list", "get"], ["team_id", "cycle_id"], "(Linear's sprints)"),
        ("project", "projects", ["list", "create", "update"], ["name", "team_ids", "target_date"], ""),
        ("comment", "comments", ["create"], ["issue_id", "body"], "on a Linear issue"),
        ("label", "labels", ["list", "create"], ["team_id", "name", "color"], ""),
    ]),
    "slack": ("Slack", "a Slack workspace", [
        ("message", "messages", ["post", "update", "delete", "search"], ["channel", "text", "thread_ts"], "in a channel"),
        ("channel", "channels", ["list", "create", "archive", "join", "rename"], ["channel", "name", "is_private"], ""),
        ("channel_history", "channel history", ["get"], ["channel", "limit", "oldest"], "recent messages of a channel"),
        ("thread_reply", "thread replies", ["post", "list"], ["channel", "thread_ts", "text"], "in a message thread"),
        ("reaction", "reactions", ["add", "remove"], ["channel", "timestamp", "name"], "emoji on a message"),
        ("user", "users", ["list", "get", "lookup_by_email"], ["user", "email"], "members of the workspace"),
        ("file", "files", ["upload", "list"], ["channels", "filename", "content"], "shared in Slack"),
        ("direct_message", "direct messages", ["send"], ["user", "text"], "to one user"),
        ("reminder", "reminders", ["create", "list"], ["text", "time", "user"], ""),
        ("status", "statuses", ["set"], ["status_text", "status_emoji"], "of your own profile"),
    ]),
    "discord": ("Discord", "a Discord server", [
        ("message", "messages", ["send", "list", "delete"], ["channel_id", "content"], "in a text channel"),
        ("channel", "channels", ["list", "create"], ["guild_id", "name"], ""),
        ("member", "members", ["list", "get", "kick", "ban"], ["guild_id", "user_id", "reason"], "of the server"),
        ("role", "roles", ["list", "assign"], ["guild_id", "user_id", "role_id"], ""),
    ]),
    "gmail": ("Gmail", "the user's Gmail mailbox", [
        ("email", "emails", ["send", "search", "get", "delete"], ["to", "subject", "body", "query", "message_id"], ""),
        ("draft", "drafts", ["create", "list", "send"], ["to", "subject", "body", "draft_id"], ""),
        ("label", "labels", ["list", "create", "apply"], ["name", "message_id", "label_id"], "to organise mail"),
        ("thread", "threads", ["get", "reply"], ["thread_id", "body"], "of emails"),
        ("attachment", "attachments", ["get"], ["message_id", "attachment_id"], "of an email"),
    ]),
    "gcal": ("Google Calendar", "a Google Calendar", [
        ("event", "events", V_ALL + ["search"], ["calendar_id", "summary", "start", "end", "attendees"], "with attendees, start and end time"),
        ("calendar", "calendars", ["list", "create"], ["summary", "time_zone"], ""),
        ("free_busy", "free/busy information", ["query"], ["time_min", "time_max", "items"], "to find open slots"),
        ("attendee", "attendees", ["add", "remove"], ["event_id", "email"], "of an event"),
    ]),
    "gdrive": ("Google Drive", "Google Drive", [
        ("file", "files", ["list", "search", "get", "upload", "download", "delete", "move", "copy"], ["file_id", "name", "parent_id", "mime_type", "query"], ""),
        ("folder", "folders", ["create", "list"], ["name", "parent_id"], ""),
        ("permission", "sharing permissions", ["list", "share", "revoke"], ["file_id", "email", "role"], "of a file"),
        ("spreadsheet", "Google Sheets spreadsheets", ["read", "update", "create"], ["spreadsheet_id", "range", "values"], "cell ranges"),
        ("document", "Google Docs documents", ["get", "create", "append"], ["document_id", "title", "text"], ""),
    ]),
    "notion": ("Notion", "a Notion workspace", [
        ("page", "pages", ["search", "get", "create", "update", "archive"], ["page_id", "parent_id", "title", "properties"], ""),
        ("database", "databases", ["query", "get", "create"], ["database_id", "filter", "sorts"], "of pages with properties"),
        ("block", "blocks", ["append", "get", "delete"], ["block_id", "children"], "of page content"),
        ("comment", "comments", ["create", "list"], ["page_id", "rich_text"], "on a Notion page"),
        ("user", "users", ["list"], ["page_size"], "of the Notion workspace"),
    ]),
    "postgres": ("PostgreSQL", "a PostgreSQL database", [
        ("query", "queries", ["run", "explain"], ["sql", "params"], "read-only SQL"),
        ("table", "tables", ["list", "describe"], ["schema", "table"], "with columns and types"),
        ("schema", "schemas", ["list"], [], ""),
        ("index", "indexes", ["list", "create"], ["table", "columns"], ""),
        ("slow_query", "slow queries", ["list"], ["min_duration_ms", "limit"], "from pg_stat_statements"),
        ("connection", "connections", ["list", "terminate"], ["pid"], "active backend connections"),
        ("database_size", "database sizes", ["get"], ["database"], ""),
    ]),
    "aws": ("AWS", "an AWS account", [
        ("instance", "EC2 instances", ["describe", "run", "start", "stop", "terminate", "reboot"], ["instance_ids", "region", "instance_type", "image_id"], "virtual machines"),
        ("bucket", "S3 buckets", ["list", "create", "delete"], ["bucket", "region"], ""),
        ("object", "S3 objects", ["list", "get", "put", "delete"], ["bucket", "key", "body"], "in a bucket"),
        ("lambda_function", "Lambda functions", ["list", "invoke", "update"], ["function_name", "payload"], "serverless"),
        ("log_events", "CloudWatch log events", ["get", "filter"], ["log_group", "filter_pattern", "start_time"], ""),
        ("metric_statistics", "CloudWatch metric statistics", ["get"], ["namespace", "metric_name", "period"], ""),
        ("iam_role", "IAM roles", ["list", "get"], ["role_name"], ""),
        ("cost_and_usage", "cost and usage", ["get"], ["time_period", "granularity"], "from Cost Explorer"),
        ("dynamodb_item", "DynamoDB items", ["get", "put", "query"], ["table_name", "key", "item"], ""),
    ]),
    "kubernetes": ("Kubernetes", "a Kubernetes cluster", [
        ("pod", "pods", ["list", "get", "delete", "logs", "exec"], ["namespace", "name", "container", "command"], ""),
        ("deployment", "deployments", ["list", "get", "scale", "restart", "rollback"], ["namespace", "name", "replicas"], ""),
        ("service", "services", ["list", "get"], ["namespace", "name"], ""),
        ("namespace", "namespaces", ["list", "create"], ["name"], ""),
        ("manifest", "manifests", ["apply"], ["yaml", "namespace"], "YAML resources"),
        ("event", "cluster events", ["list"], ["namespace", "field_selector"], ""),
        ("node", "nodes", ["list", "describe"], ["name"], "and their capacity"),
    ]),
    "stripe": ("Stripe", "a Stripe account", [
        ("customer", "customers", ["list", "get", "create", "update", "search"], ["customer_id", "email", "name"], ""),
        ("payment_intent", "payment intents", ["create", "get", "list", "cancel"], ["amount", "currency", "customer"], "to charge a card"),
        ("refund", "refunds", ["create", "list"], ["payment_intent", "amount", "reason"], "of a payment"),
        ("invoice", "invoices", ["list", "get", "create", "finalize", "void"], ["customer", "invoice_id"], ""),
        ("subscription", "subscriptions", ["list", "get", "create", "cancel", "update"], ["customer", "price", "subscription_id"], "recurring billing"),
        ("balance", "balances", ["get"], [], "available and pending funds"),
        ("product", "products", ["list", "create"], ["name", "description"], ""),
    ]),
    "sentry": ("Sentry", "a Sentry organization", [
        ("issue", "issues", ["list", "get", "resolve", "assign", "ignore"], ["organization", "project", "issue_id", "query"], "grouped errors"),
        ("event", "error events", ["list", "get"], ["issue_id", "event_id"], "with stack traces"),
        ("project", "projects", ["list", "create"], ["organization", "name", "platform"], ""),
        ("release", "releases", ["list", "create"], ["organization", "version"], ""),
        ("alert_rule", "alert rules", ["list", "create"], ["project", "conditions"], ""),
    ]),
    "datadog": ("Datadog", "a Datadog account", [
        ("monitor", "monitors", ["list", "get", "create", "mute", "delete"], ["monitor_id", "query", "name", "message"], "alerts"),
        ("metrics", "metric timeseries", ["query"], ["query", "from", "to"], ""),
        ("logs", "logs", ["search"], ["query", "from", "to", "limit"], ""),
        ("dashboard", "dashboards", ["list", "get", "create"], ["dashboard_id", "title", "widgets"], ""),
        ("incident", "incidents", ["list", "create", "update"], ["title", "severity", "incident_id"], ""),
        ("host", "hosts", ["list", "mute"], ["filter", "host_name"], "reporting to Datadog"),
        ("slo", "service level objectives", ["list", "get"], ["slo_id"], "(SLOs)"),
    ]),
}

VERB_PHRASE = {
    "list": "List {plural} in {ctx}",
    "get": "Get one {res} from {ctx} by its ID",
    "create": "Create a new {res} in {ctx}",
    "update": "Update an existing {res} in {ctx}",
    "delete": "Delete a {res} from {ctx}",
    "search": "Search {plural} in {ctx} with a text query",
    "close": "Close a {res} in {ctx}",
    "merge": "Merge a {res} in {ctx}",
    "review": "Submit a review on a {res} in {ctx}",
    "rerun": "Re-run a failed {res} in {ctx}",
    "cancel": "Cancel a {res} in {ctx}",
    "fork": "Fork a {res} into your account on {product}",
    "retry": "Retry a failed {res} in {ctx}",
    "approve": "Approve a {res} in {ctx}",
    "transition": "Move a {res} to another workflow status in {ctx}",
    "assign": "Assign a {res} in {ctx} to a user",
    "post": "Post a {res} to {ctx}",
    "archive": "Archive a {res} in {ctx}",
    "join": "Join a {res} in {ctx}",
    "rename": "Rename a {res} in {ctx}",
    "add": "Add {plural} on {ctx}",
    "remove": "Remove {plural} from {ctx}",
    "lookup_by_email": "Look up a {res} of {ctx} by email address",
    "upload": "Upload a {res} to {ctx}",
    "send": "Send a {res} in {ctx}",
    "set": "Set the {res} in {ctx}",
    "kick": "Kick a {res} out of {ctx}",
    "ban": "Ban a {res} from {ctx}",
    "apply": "Apply {plural} in {ctx}",
    "reply": "Reply to a {res} in {ctx}",
    "query": "Query {plural} in {ctx}",
    "download": "Download a {res} from {ctx}",
    "move": "Move a {res} to another folder in {ctx}",
    "copy": "Copy a {res} in {ctx}",
    "share": "Share a file by granting {plural} in {ctx}",
    "revoke": "Revoke {plural} in {ctx}",
    "read": "Read values from {plural} in {ctx}",
    "append": "Append content to {plural} in {ctx}",
    "run": "Run {plural} against {ctx}",
    "explain": "Explain the execution plan of {plural} in {ctx}",
    "describe": "Describe {plural} in {ctx}",
    "terminate": "Terminate {plural} in {ctx}",
    "start": "Start stopped {plural} in {ctx}",
    "stop": "Stop running {plural} in {ctx}",
    "reboot": "Reboot {plural} in {ctx}",
    "put": "Put (write) {plural} into {ctx}",
    "invoke": "Invoke one of the {plural} in {ctx}",
    "filter": "Filter {plural} in {ctx} with a pattern",
    "logs": "Get the logs of a {res} in {ctx}",
    "exec": "Execute a command inside a {res} in {ctx}",
    "scale": "Scale the replicas of a {res} in {ctx}",
    "restart": "Restart a {res} in {ctx}",
    "rollback": "Roll back a {res} in {ctx} to its previous revision",
    "finalize": "Finalize a draft {res} in {ctx}",
    "void": "Void an {res} in {ctx}",
    "resolve": "Resolve an {res} in {ctx}",
    "ignore": "Ignore an {res} in {ctx}",
    "mute": "Mute a {res} in {ctx}",
    "count": "Count the {plural} in {ctx} that match a filter",
    "export": "Export {plural} from {ctx} as a CSV file",
    "history": "Get the change history (audit trail) of a {res} in {ctx}",
}

SYN = {"list": "show", "get": "fetch", "create": "make", "delete": "remove", "update": "change",
       "search": "find", "send": "send out", "post": "publish"}
FILLER = {"a", "an", "the", "one", "its", "by", "of", "from", "in", "on", "to", "with"}


def singular_words(res):
    return res.replace("_", " ")


def build():
    rnd = random.Random(4)
    catalog = {}
    queries = []
    for server, (product, ctx, resources) in SERVERS.items():
        tools = []
        for res, plural, verbs, params, extra in resources:
            for verb in verbs + ["count", "export"]:
                name = f"{verb}_{res}" if verb not in ("logs",) else f"get_{res}_logs"
                if verb in ("add", "remove") and res == "reaction":
                    name = f"{verb}_reaction"
                if verb == "lookup_by_email":
                    name = "lookup_user_by_email"
                if verb == "count":
                    name = f"count_{res}s" if not res.endswith("s") else f"count_{res}"
                if verb == "export":
                    name = f"export_{res}s" if not res.endswith("s") else f"export_{res}"
                if verb == "history":
                    name = f"get_{res}_history"
                template = VERB_PHRASE[verb]
                desc = template.format(res=singular_words(res), plural=plural, ctx=ctx, product=product)
                if extra:
                    desc += f" ({extra})" if extra.startswith(("(", "such", "with", "from", "of", "on", "in", "to", "at", "between", "and", "for")) is False else f" {extra}"
                desc += "."
                props = {p: {"type": "string"} for p in params}
                tools.append({
                    "name": name,
                    "description": desc,
                    "inputSchema": {"type": "object", "properties": props, "required": params[:1]},
                })
        catalog[server] = tools
    # Trim or pad to exactly 500 tools, keeping every server.
    total = sum(len(t) for t in catalog.values())
    servers = list(catalog)
    i = 0
    while total > 500:
        s = servers[i % len(servers)]
        if len(catalog[s]) > 20:
            catalog[s].pop()
            total -= 1
        i += 1
    assert total <= 500
    pad = 0
    while total < 500:
        s = servers[pad % len(servers)]
        product, ctx, resources = SERVERS[s]
        k = pad // len(servers)
        res, plural, _verbs, params, _extra = resources[k % len(resources)]
        name = f"get_{res}_history"
        if all(t["name"] != name for t in catalog[s]):
            desc = VERB_PHRASE["history"].format(res=singular_words(res), plural=plural, ctx=ctx, product=product) + "."
            props = {p: {"type": "string"} for p in params}
            catalog[s].append({"name": name, "description": desc,
                               "inputSchema": {"type": "object", "properties": props, "required": params[:1]}})
            total += 1
        pad += 1
    for server, tools in catalog.items():
        for t in tools:
            words = re.findall(r"[A-Za-z0-9/]+", t["description"].lower())
            out = []
            for k, w in enumerate(words):
                if w in FILLER and rnd.random() < 0.7:
                    continue
                if k == 0 and w in SYN and rnd.random() < 0.4:
                    w = SYN[w]
                out.append(w)
            if len(out) > 6 and rnd.random() < 0.3:
                out = out[: max(5, len(out) - 3)]
            queries.append({"query": " ".join(out), "expect": f"{server}__{t['name']}"})
    return catalog, queries


if __name__ == "__main__":
    catalog, queries = build()
    (HERE / "catalog.json").write_text(json.dumps(catalog, indent=1) + "\n")
    (HERE / "queries_description.json").write_text(json.dumps(queries, indent=1) + "\n")
    n = sum(len(v) for v in catalog.values())
    print(f"{len(catalog)} servers, {n} tools, {len(queries)} description-phrased queries")
