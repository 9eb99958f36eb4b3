CREATE SEQUENCE "public"."kb_crawl_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "kb_crawls" (
	"id" text PRIMARY KEY DEFAULT 'crl_' || nextval('kb_crawl_seq') NOT NULL,
	"agent_id" text NOT NULL,
	"account_id" text NOT NULL,
	"start_url" text NOT NULL,
	"mode" text NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"pages" integer DEFAULT 0 NOT NULL,
	"error" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "kb_documents" ADD COLUMN "source" text DEFAULT 'text' NOT NULL;--> statement-breakpoint
ALTER TABLE "kb_documents" ADD COLUMN "mime_type" text;--> statement-breakpoint
ALTER TABLE "kb_documents" ADD COLUMN "bytes" integer;--> statement-breakpoint
ALTER TABLE "kb_documents" ADD COLUMN "blob_key" text;--> statement-breakpoint
ALTER TABLE "kb_documents" ADD COLUMN "content_hash" text;--> statement-breakpoint
ALTER TABLE "kb_documents" ADD COLUMN "summarized_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "kb_crawls" ADD CONSTRAINT "kb_crawls_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kb_crawls" ADD CONSTRAINT "kb_crawls_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "kb_crawls_agent_idx" ON "kb_crawls" USING btree ("agent_id","created_at");