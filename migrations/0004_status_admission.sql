ALTER TABLE "clusters" ADD COLUMN "link_republished_for" text;--> statement-breakpoint
ALTER TABLE "clusters" ADD COLUMN "link_republished_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "object_status" ADD COLUMN "stored_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "object_status" ADD COLUMN "stream_seq" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
-- A cluster's current link was either republished for or was its first link: nothing is owed.
UPDATE "clusters" SET "link_republished_for" = "agent_link_id";--> statement-breakpoint
-- Stored rows date from when the hub received them; any later report orders after them.
UPDATE "object_status" SET "stored_at" = "received_at";--> statement-breakpoint
-- Rows the new intake would have refused: objects the hub never placed on that cluster, and
-- reports about a generation the hub never sent (they pinned the object's status).
DELETE FROM "object_status" s
 WHERE NOT EXISTS (
   SELECT 1 FROM "desired_objects" d
    WHERE d."cluster_name" = s."cluster_name" AND d."kind" = s."kind" AND d."namespace" = s."namespace"
      AND d."name" = s."name" AND d."generation" >= s."generation");
--> statement-breakpoint
-- The workload a row belongs to is the hub's, whatever the agent claimed.
UPDATE "object_status" s SET "workload_id" = d."workload_id"::text
  FROM "desired_objects" d
 WHERE d."cluster_name" = s."cluster_name" AND d."kind" = s."kind" AND d."namespace" = s."namespace"
   AND d."name" = s."name" AND s."workload_id" <> d."workload_id"::text;
