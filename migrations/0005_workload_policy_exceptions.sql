CREATE TABLE "workload_policy_exceptions" (
	"name" text PRIMARY KEY NOT NULL,
	"namespace" text NOT NULL,
	"kind" text,
	"workload_name" text,
	"allow" jsonb NOT NULL,
	"reason" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_by" text NOT NULL,
	CONSTRAINT "workload_policy_exceptions_scope_check" CHECK ("workload_policy_exceptions"."workload_name" is null or "workload_policy_exceptions"."kind" is not null)
);
