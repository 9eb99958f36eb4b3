CREATE SEQUENCE "public"."dnc_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE SEQUENCE "public"."phone_number_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "dnc_entries" (
	"id" text PRIMARY KEY DEFAULT 'dnc_' || nextval('dnc_seq') NOT NULL,
	"account_id" text NOT NULL,
	"phone_e164" text NOT NULL,
	"reason" text,
	"source" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "phone_numbers" (
	"id" text PRIMARY KEY DEFAULT 'num_' || nextval('phone_number_seq') NOT NULL,
	"account_id" text NOT NULL,
	"e164" text NOT NULL,
	"provider" text NOT NULL,
	"agent_id" text,
	"label" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "dnc_entries" ADD CONSTRAINT "dnc_entries_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "phone_numbers" ADD CONSTRAINT "phone_numbers_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "phone_numbers" ADD CONSTRAINT "phone_numbers_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "dnc_entries_account_phone_uq" ON "dnc_entries" USING btree ("account_id","phone_e164");--> statement-breakpoint
CREATE INDEX "dnc_entries_account_created_idx" ON "dnc_entries" USING btree ("account_id","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "phone_numbers_e164_uq" ON "phone_numbers" USING btree ("e164");--> statement-breakpoint
CREATE INDEX "phone_numbers_account_idx" ON "phone_numbers" USING btree ("account_id","created_at","id");--> statement-breakpoint
CREATE INDEX "phone_numbers_agent_idx" ON "phone_numbers" USING btree ("account_id","agent_id");