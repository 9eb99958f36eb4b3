CREATE TABLE "widget_event_counts" (
	"account_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"day" date NOT NULL,
	"type" text NOT NULL,
	"count" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "widget_event_counts_agent_id_day_type_pk" PRIMARY KEY("agent_id","day","type")
);
--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "visitor_token_hash" text;--> statement-breakpoint
ALTER TABLE "widget_event_counts" ADD CONSTRAINT "widget_event_counts_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "widget_event_counts_account_day_idx" ON "widget_event_counts" USING btree ("account_id","day");