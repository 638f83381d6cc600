//! Diesel's view of the tables; identical on both backends (see the two migration folders).

diesel::table! {
    users (id) {
        id -> Text,
        kind -> Text,
        email -> Nullable<Text>,
        password_hash -> Nullable<Text>,
        name -> Nullable<Text>,
        plan -> Text,
        monthly_limit -> Nullable<BigInt>,
        created_at -> BigInt,
    }
}

diesel::table! {
    organizations (id) {
        id -> Text,
        name -> Text,
        owner_user_id -> Text,
        plan -> Text,
        monthly_limit -> Nullable<BigInt>,
        created_at -> BigInt,
    }
}

diesel::table! {
    org_members (org_id, user_id) {
        org_id -> Text,
        user_id -> Text,
        role -> Text,
        created_at -> BigInt,
        /// The organization's `created_at` (migration 000015): the sort key of a user's
        /// organizations, in the member's index.
        org_created_at -> BigInt,
    }
}

diesel::table! {
    idempotency_keys (owner, idem_key) {
        owner -> Text,
        idem_key -> Text,
        fingerprint -> Text,
        created_at -> BigInt,
        lease_until -> BigInt,
        claim_token -> Text,
        status -> Nullable<Integer>,
        headers -> Nullable<Text>,
        body -> Nullable<Binary>,
    }
}

diesel::table! {
    api_keys (id) {
        id -> Text,
        owner -> Text,
        name -> Text,
        lookup_prefix -> Text,
        hash -> Text,
        created_at -> BigInt,
        revoked_at -> Nullable<BigInt>,
        created_by -> Nullable<Text>,
        scopes -> Nullable<Text>,
        expires_at -> Nullable<BigInt>,
        last_used_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    web_sessions (token_hash) {
        token_hash -> Text,
        user_id -> Text,
        created_at -> BigInt,
        expires_at -> BigInt,
        id -> Text,
        last_seen_at -> BigInt,
        user_agent -> Nullable<Text>,
        address -> Nullable<Text>,
    }
}

// Invitations to organizations (migration 000019).
diesel::table! {
    org_invitations (id) {
        id -> Text,
        token_hash -> Text,
        org_id -> Text,
        email -> Text,
        role -> Text,
        invited_by -> Text,
        created_at -> BigInt,
        expires_at -> BigInt,
    }
}

// Password-reset links, by the hash of their token (migration 000017).
diesel::table! {
    password_resets (token_hash) {
        token_hash -> Text,
        user_id -> Text,
        created_at -> BigInt,
        expires_at -> BigInt,
        used_at -> Nullable<BigInt>,
    }
}

// E-mail verification links, by the hash of their token, and each user's proven address
// (migration 000020).
diesel::table! {
    email_verifications (token_hash) {
        token_hash -> Text,
        user_id -> Text,
        email -> Text,
        created_at -> BigInt,
        expires_at -> BigInt,
    }
}

diesel::table! {
    verified_emails (user_id) {
        user_id -> Text,
        email -> Text,
        verified_at -> BigInt,
    }
}

diesel::table! {
    handoffs (token_hash) {
        token_hash -> Text,
        user_id -> Text,
        code_hash -> Text,
        created_at -> BigInt,
        expires_at -> BigInt,
        wrong_codes -> BigInt,
        claimed_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    promo_codes (code) {
        code -> Text,
        name -> Text,
        grant_ops -> BigInt,
        expires_at -> Nullable<BigInt>,
        created_at -> BigInt,
    }
}

diesel::table! {
    promo_grants (redemption_id) {
        redemption_id -> Text,
        owner -> Text,
        name -> Text,
        code -> Nullable<Text>,
        ops_granted -> BigInt,
        ops_remaining -> BigInt,
        expires_at -> Nullable<BigInt>,
        created_at -> BigInt,
    }
}

diesel::table! {
    sessions (owner, session_id) {
        owner -> Text,
        session_id -> Text,
        title -> Nullable<Text>,
        created_at -> BigInt,
        updated_at -> BigInt,
        version_id -> Nullable<Text>,
        section_count -> BigInt,
    }
}

diesel::table! {
    document_versions (version_id) {
        version_id -> Text,
        owner -> Text,
        session_id -> Text,
        /// Empty once converted (migration 000021): the HTML is in `document_chunks`.
        html -> Text,
        /// The hashes of its chunks, in order (`chunks.rs`).
        chunks -> Nullable<Binary>,
        section_count -> BigInt,
        source -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    document_chunks (owner, session_id, hash) {
        owner -> Text,
        session_id -> Text,
        hash -> Binary,
        body -> Binary,
    }
}

diesel::joinable!(org_members -> organizations (org_id));

diesel::table! {
    usage_ledger (request_id) {
        request_id -> Text,
        owner -> Text,
        cycle -> Text,
        status -> Text,
        tier_ops -> BigInt,
        promo_ops -> BigInt,
        first_redemption -> Nullable<Text>,
        created_at -> BigInt,
        settled_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    usage_draws (request_id, redemption_id) {
        request_id -> Text,
        redemption_id -> Text,
        draw_ops -> BigInt,
    }
}

diesel::table! {
    usage_counters (owner, cycle) {
        owner -> Text,
        cycle -> Text,
        tier_used -> BigInt,
    }
}

diesel::table! {
    jobs (job_id) {
        job_id -> Text,
        owner -> Text,
        session_id -> Text,
        job_type -> Text,
        status -> Text,
        progress -> Integer,
        attempts -> Integer,
        request -> Text,
        result -> Nullable<Text>,
        error -> Nullable<Text>,
        metadata -> Text,
        state -> Text,
        created_at -> BigInt,
        updated_at -> BigInt,
        finished_at -> Nullable<BigInt>,
        lease_until -> Nullable<BigInt>,
        committed_version -> Nullable<Text>,
        /// A finished job's request, state, result, metadata and events (`jobs/archive.rs`);
        /// the JSON columns are then empty and its events have no rows.
        archive -> Nullable<Binary>,
    }
}

diesel::table! {
    job_events (job_id, sequence) {
        job_id -> Text,
        sequence -> BigInt,
        kind -> Text,
        content -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    chat_messages (message_id) {
        message_id -> Text,
        owner -> Text,
        session_id -> Text,
        position -> BigInt,
        role -> Text,
        content -> Text,
        job_id -> Nullable<Text>,
        version_before -> Nullable<Text>,
        version_after -> Nullable<Text>,
        active -> Bool,
        created_at -> BigInt,
    }
}

// Files of sessions and templates (migration 000005); never joined with other tables.
diesel::table! {
    images (image_id) {
        image_id -> Text,
        owner -> Text,
        session_id -> Text,
        content_type -> Text,
        size_bytes -> BigInt,
        created_at -> BigInt,
    }
}

diesel::table! {
    export_files (export_id) {
        export_id -> Text,
        owner -> Text,
        session_id -> Text,
        format -> Text,
        filename -> Text,
        content_type -> Text,
        size_bytes -> BigInt,
        created_at -> BigInt,
        expires_at -> BigInt,
    }
}

diesel::table! {
    templates (template_id) {
        template_id -> Text,
        owner -> Text,
        name -> Text,
        description -> Nullable<Text>,
        html -> Text,
        section_count -> BigInt,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

// Guesses being throttled (migration 000016).
diesel::table! {
    throttles (scope) {
        scope -> Text,
        failures -> BigInt,
        last_at -> BigInt,
    }
}

diesel::allow_tables_to_appear_in_same_query!(
    users,
    organizations,
    org_members,
    api_keys,
    idempotency_keys,
    web_sessions,
    handoffs,
    promo_codes,
    promo_grants,
    sessions,
    document_versions,
    usage_ledger,
    usage_draws,
    usage_counters,
    jobs,
    job_events,
    chat_messages,
);

// Attachments and their indexed passages (migration 000006). The full-text side of the
// passages (SQLite `attachment_fts`, PostgreSQL `attachment_passages.tsv`) is reached with
// per-backend SQL in `attachments.rs`, not through these definitions.
diesel::table! {
    attachments (attachment_id) {
        attachment_id -> Text,
        owner -> Text,
        session_id -> Text,
        filename -> Text,
        content_type -> Text,
        size_bytes -> BigInt,
        state -> Text,
        source -> Text,
        job_id -> Nullable<Text>,
        error -> Nullable<Text>,
        preview -> Text,
        text_chars -> BigInt,
        passage_count -> BigInt,
        created_at -> BigInt,
        updated_at -> BigInt,
        upload_expires_at -> Nullable<BigInt>,
        progress -> Integer,
    }
}

diesel::table! {
    attachment_passages (passage_id) {
        passage_id -> BigInt,
        attachment_id -> Text,
        scope -> Text,
        chunk_index -> BigInt,
        text -> Text,
    }
}

// Attachments whose passages wait to be indexed again (migration 000007: lexemes computed in
// Rust); emptied when the database opens.
diesel::table! {
    attachment_reindex (attachment_id) {
        attachment_id -> Text,
    }
}

diesel::table! {
    /// Each owner's attachment bytes, kept by triggers on `attachments` (migration 000023).
    attachment_totals (owner) {
        owner -> Text,
        bytes -> BigInt,
    }
}

diesel::joinable!(attachment_passages -> attachments (attachment_id));
diesel::allow_tables_to_appear_in_same_query!(attachments, attachment_passages);

diesel::table! {
    webhook_endpoints (id) {
        id -> Text,
        owner -> Text,
        url -> Text,
        description -> Text,
        events -> Text,
        secret -> Text,
        previous_secret -> Nullable<Text>,
        previous_secret_until -> Nullable<BigInt>,
        disabled_reason -> Nullable<Text>,
        failing_since -> Nullable<BigInt>,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::table! {
    webhook_deliveries (id) {
        id -> Text,
        endpoint_id -> Text,
        owner -> Text,
        event -> Text,
        payload -> Text,
        created_at -> BigInt,
        status -> Text,
        attempts -> Integer,
        next_attempt_at -> BigInt,
        lease_until -> Nullable<BigInt>,
        lease_token -> Nullable<Text>,
        last_status_code -> Nullable<Integer>,
        last_error -> Nullable<Text>,
        delivered_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    webhook_attempts (delivery_id, attempt) {
        delivery_id -> Text,
        attempt -> Integer,
        at -> BigInt,
        status_code -> Nullable<Integer>,
        latency_ms -> BigInt,
        error -> Nullable<Text>,
    }
}

diesel::allow_tables_to_appear_in_same_query!(webhook_endpoints, webhook_deliveries, webhook_attempts);
