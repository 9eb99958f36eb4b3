CREATE SEQUENCE "public"."contact_item_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE SEQUENCE "public"."contact_list_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "contact_list_items" (
	"id" text PRIMARY KEY DEFAULT 'itm_' || nextval('contact_item_seq') NOT NULL,
	"list_id" text NOT NULL,
	"phone_e164" text NOT NULL,
	"name" text,
	"timezone" text,
	"variables" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "contact_lists" (
	"id" text PRIMARY KEY DEFAULT 'lst_' || nextval('contact_list_seq') NOT NULL,
	"account_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"name" text NOT NULL,
	"default_region" text,
	"item_count" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "contact_list_items" ADD CONSTRAINT "contact_list_items_list_id_contact_lists_id_fk" FOREIGN KEY ("list_id") REFERENCES "public"."contact_lists"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contact_lists" ADD CONSTRAINT "contact_lists_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contact_lists" ADD CONSTRAINT "contact_lists_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "contact_list_items_list_phone_uq" ON "contact_list_items" USING btree ("list_id","phone_e164");--> statement-breakpoint
CREATE INDEX "contact_list_items_list_created_idx" ON "contact_list_items" USING btree ("list_id","created_at","id");--> statement-breakpoint
CREATE INDEX "contact_lists_agent_created_idx" ON "contact_lists" USING btree ("account_id","agent_id","created_at","id");