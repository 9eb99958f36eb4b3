CREATE SEQUENCE "public"."kb_sync_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "kb_syncs" (
	"id" text PRIMARY KEY DEFAULT 'sync_' || nextval('kb_sync_seq') NOT NULL,
	"account_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"trigger" text NOT NULL,
	"status" text DEFAULT 'running' NOT NULL,
	"pages_checked" integer DEFAULT 0 NOT NULL,
	"not_modified" integer DEFAULT 0 NOT NULL,
	"unchanged" integer DEFAULT 0 NOT NULL,
	"added" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"changed" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"removed" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"summary_rebuild" boolean DEFAULT false NOT NULL,
	"error" text,
	"claimed_at" timestamp (3) with time zone,
	"started_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "kb_documents" ADD COLUMN "etag" text;--> statement-breakpoint
ALTER TABLE "kb_documents" ADD COLUMN "last_modified" text;--> statement-breakpoint
ALTER TABLE "kb_documents" ADD COLUMN "fetched_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "kb_syncs" ADD CONSTRAINT "kb_syncs_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kb_syncs" ADD CONSTRAINT "kb_syncs_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "kb_syncs_agent_started_idx" ON "kb_syncs" USING btree ("account_id","agent_id","started_at","id");--> statement-breakpoint
-- A knowledge sync writes a page's validators and fetch time after every 304 or unchanged answer: that is no
-- change of the knowledge, so it must not move the agent's revision (each move drops the cached turn context,
-- and the trigger's agent update would take the agent's row lock after the document's, against the lock order
-- of domain/kb/summary.ts lockKnowledge).
CREATE OR REPLACE FUNCTION svc_knowledge_revision() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND TG_TABLE_NAME = 'kb_documents' AND NEW.agent_id IS NOT DISTINCT FROM OLD.agent_id
    AND (to_jsonb(NEW) - 'etag' - 'last_modified' - 'fetched_at') = (to_jsonb(OLD) - 'etag' - 'last_modified' - 'fetched_at')
  THEN
    RETURN NULL;
  END IF;
  IF TG_OP <> 'INSERT' THEN UPDATE agents SET revision = revision + 1 WHERE id = OLD.agent_id; END IF;
  IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW.agent_id IS DISTINCT FROM OLD.agent_id) THEN
    UPDATE agents SET revision = revision + 1 WHERE id = NEW.agent_id;
  END IF;
  RETURN NULL;
END $$;
