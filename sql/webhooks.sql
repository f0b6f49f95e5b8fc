-- Webhooks (docs/mcp.md "Webhooks"): the gateway posts a tenant's changes (memory_changes) to the
-- URLs its configuration gives a token. Where each webhook has got to and what it gave up on
-- are kept here, per tenant, so that a restarted gateway goes on where it stopped (delivery is
-- at least once) and an operator sees what was not delivered. Written by the gateway as the
-- tenant (row-level security as every table); erased with the tenant (sql/erase.sql).

-- Each webhook's place in its tenant's change feed: `hook` names the webhook (a hash of its
-- URL, src/webhook.rs of the gateway), `cursor` is memory_changes' cursor after the last change
-- delivered or given up on.
CREATE TABLE memory.webhook_cursors (
    user_id    text        NOT NULL,
    hook       text        NOT NULL,
    cursor     text        NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, hook)
);

-- The dead letters: a change whose every attempt failed, with the body that was not accepted
-- (ids only, as the feed: never text), how many attempts were made and the last error.
CREATE TABLE memory.webhook_dead (
    user_id     text        NOT NULL,
    id          uuid        NOT NULL DEFAULT gen_random_uuid(),
    hook        text        NOT NULL,
    delivery_id text        NOT NULL,
    body        jsonb       NOT NULL,
    attempts    integer     NOT NULL CHECK (attempts > 0),
    last_error  text        NOT NULL,
    failed_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, id)
);
CREATE INDEX webhook_dead_failed_idx ON memory.webhook_dead (user_id, failed_at);
