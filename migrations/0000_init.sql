CREATE TABLE "audit_log" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"target_type" text NOT NULL,
	"target_id" text NOT NULL,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "cluster_credentials" (
	"id" serial PRIMARY KEY NOT NULL,
	"cluster_name" text NOT NULL,
	"nats_user" text NOT NULL,
	"password_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "clusters" (
	"name" text PRIMARY KEY NOT NULL,
	"labels" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"state" text NOT NULL,
	"registration_secret_hash" text NOT NULL,
	"registered_by" text NOT NULL,
	"registered_at" timestamp with time zone DEFAULT now() NOT NULL,
	"accepted_at" timestamp with time zone,
	"accepted_by" text,
	"removed_at" timestamp with time zone,
	"credentials_issued" boolean DEFAULT false NOT NULL,
	"agent_version" text,
	"kubernetes_version" text,
	"last_heartbeat_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "clusters_state_check" CHECK ("clusters"."state" in ('pending', 'accepted', 'removed'))
);
--> statement-breakpoint
CREATE TABLE "desired_objects" (
	"cluster_name" text NOT NULL,
	"kind" text NOT NULL,
	"namespace" text NOT NULL,
	"name" text NOT NULL,
	"workload_id" uuid NOT NULL,
	"revision" integer NOT NULL,
	"generation" bigint NOT NULL,
	"deleted" boolean DEFAULT false NOT NULL,
	"manifest" jsonb,
	"manifest_hash" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "desired_objects_cluster_name_kind_namespace_name_pk" PRIMARY KEY("cluster_name","kind","namespace","name")
);
--> statement-breakpoint
CREATE TABLE "api_tokens" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"role" text NOT NULL,
	"token_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by" text NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_tokens_role_check" CHECK ("api_tokens"."role" in ('viewer', 'operator', 'admin', 'bootstrap'))
);
--> statement-breakpoint
CREATE TABLE "workload_revisions" (
	"workload_id" uuid NOT NULL,
	"revision" integer NOT NULL,
	"hash" text NOT NULL,
	"metadata" jsonb NOT NULL,
	"spec" jsonb NOT NULL,
	"overrides" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by" text NOT NULL,
	CONSTRAINT "workload_revisions_workload_id_revision_pk" PRIMARY KEY("workload_id","revision")
);
--> statement-breakpoint
CREATE TABLE "workloads" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"kind" text NOT NULL,
	"namespace" text NOT NULL,
	"name" text NOT NULL,
	"placement" jsonb NOT NULL,
	"current_revision" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "object_status" (
	"cluster_name" text NOT NULL,
	"kind" text NOT NULL,
	"namespace" text NOT NULL,
	"name" text NOT NULL,
	"workload_id" text NOT NULL,
	"revision" integer NOT NULL,
	"generation" bigint NOT NULL,
	"observed_generation" bigint NOT NULL,
	"replicas" integer NOT NULL,
	"ready_replicas" integer NOT NULL,
	"updated_replicas" integer NOT NULL,
	"updated_ready_replicas" integer NOT NULL,
	"available_replicas" integer NOT NULL,
	"health" text NOT NULL,
	"message" text NOT NULL,
	"reported_at" timestamp with time zone NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "object_status_cluster_name_kind_namespace_name_pk" PRIMARY KEY("cluster_name","kind","namespace","name")
);
--> statement-breakpoint
CREATE TABLE "outbox" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"subject" text NOT NULL,
	"msg_id" text NOT NULL,
	"payload" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "cluster_credentials" ADD CONSTRAINT "cluster_credentials_cluster_name_clusters_name_fk" FOREIGN KEY ("cluster_name") REFERENCES "public"."clusters"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workload_revisions" ADD CONSTRAINT "workload_revisions_workload_id_workloads_id_fk" FOREIGN KEY ("workload_id") REFERENCES "public"."workloads"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_log_target_idx" ON "audit_log" USING btree ("target_type","target_id");--> statement-breakpoint
CREATE INDEX "cluster_credentials_cluster_idx" ON "cluster_credentials" USING btree ("cluster_name");--> statement-breakpoint
CREATE INDEX "clusters_state_idx" ON "clusters" USING btree ("state");--> statement-breakpoint
CREATE INDEX "desired_objects_workload_idx" ON "desired_objects" USING btree ("workload_id","cluster_name");--> statement-breakpoint
CREATE UNIQUE INDEX "api_tokens_hash_idx" ON "api_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "api_tokens_name_idx" ON "api_tokens" USING btree ("name");--> statement-breakpoint
CREATE UNIQUE INDEX "workloads_live_object_idx" ON "workloads" USING btree ("kind","namespace","name") WHERE "workloads"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "outbox_unsent_idx" ON "outbox" USING btree ("id") WHERE "outbox"."sent_at" is null;