DROP TABLE "cluster_credentials" CASCADE;--> statement-breakpoint
ALTER TABLE "clusters" ADD COLUMN "agent_public_key" text;--> statement-breakpoint
ALTER TABLE "clusters" ADD COLUMN "account_public_key" text;--> statement-breakpoint
ALTER TABLE "clusters" ADD COLUMN "revoked_keys" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "clusters" ADD COLUMN "credential_id" text;--> statement-breakpoint
ALTER TABLE "clusters" ADD COLUMN "credential_expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "clusters" ADD COLUMN "last_signed_request_ms" bigint DEFAULT 0 NOT NULL;