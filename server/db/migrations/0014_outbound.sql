CREATE SEQUENCE "public"."call_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE SEQUENCE "public"."campaign_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "calls" (
	"id" text PRIMARY KEY DEFAULT 'call_' || nextval('call_seq') NOT NULL,
	"account_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"profile_id" text,
	"campaign_id" text,
	"contact_item_id" text,
	"attempt" integer DEFAULT 1 NOT NULL,
	"direction" text DEFAULT 'outbound' NOT NULL,
	"from_e164" text,
	"to_e164" text NOT NULL,
	"status" text NOT NULL,
	"outcome" text,
	"conversation_id" text,
	"failure_reason" text,
	"variables" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"script" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"provider" text NOT NULL,
	"provider_call_id" text,
	"owner_instance" text,
	"started_at" timestamp (3) with time zone,
	"answered_at" timestamp (3) with time zone,
	"ended_at" timestamp (3) with time zone,
	"duration_s" integer,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "campaign_contacts" (
	"campaign_id" text NOT NULL,
	"item_id" text NOT NULL,
	"phone_e164" text NOT NULL,
	"name" text,
	"timezone" text,
	"variables" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_call_id" text,
	"outcome" text,
	"next_attempt_at" timestamp (3) with time zone,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "campaign_contacts_campaign_id_item_id_pk" PRIMARY KEY("campaign_id","item_id")
);
--> statement-breakpoint
CREATE TABLE "campaigns" (
	"id" text PRIMARY KEY DEFAULT 'cmp_' || nextval('campaign_seq') NOT NULL,
	"account_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"profile_id" text NOT NULL,
	"list_id" text NOT NULL,
	"name" text NOT NULL,
	"status" text DEFAULT 'draft' NOT NULL,
	"schedule" jsonb NOT NULL,
	"max_concurrent" integer DEFAULT 1 NOT NULL,
	"max_attempts" integer DEFAULT 1 NOT NULL,
	"retry_delay_minutes" double precision DEFAULT 60 NOT NULL,
	"provider" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "instances" (
	"id" text PRIMARY KEY NOT NULL,
	"started_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"seen_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "calls" ADD CONSTRAINT "calls_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "calls" ADD CONSTRAINT "calls_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaign_contacts" ADD CONSTRAINT "campaign_contacts_campaign_id_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."campaigns"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_profile_id_profiles_id_fk" FOREIGN KEY ("profile_id") REFERENCES "public"."profiles"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_list_id_contact_lists_id_fk" FOREIGN KEY ("list_id") REFERENCES "public"."contact_lists"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "calls_account_created_idx" ON "calls" USING btree ("account_id","created_at","id");--> statement-breakpoint
CREATE INDEX "calls_live_idx" ON "calls" USING btree ("status","account_id","created_at") WHERE status IN ('queued', 'ringing', 'in_progress');--> statement-breakpoint
CREATE INDEX "calls_campaign_idx" ON "calls" USING btree ("campaign_id","created_at");--> statement-breakpoint
CREATE INDEX "calls_provider_idx" ON "calls" USING btree ("provider_call_id");--> statement-breakpoint
CREATE UNIQUE INDEX "calls_contact_attempt_uq" ON "calls" USING btree ("campaign_id","contact_item_id","attempt") WHERE campaign_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "campaign_contacts_due_idx" ON "campaign_contacts" USING btree ("campaign_id","status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "campaigns_account_created_idx" ON "campaigns" USING btree ("account_id","created_at","id");--> statement-breakpoint
CREATE INDEX "campaigns_running_idx" ON "campaigns" USING btree ("status") WHERE status = 'running';