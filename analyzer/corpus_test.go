package analyzer

import (
	"fmt"
	"strings"
)

// dumpCorpus generates a pg_dump-like script of about size bytes: the
// SET header, tables with sequences, defaults and indexes, PL/pgSQL and
// SQL functions, views, grants, COPY data blocks, and a few statements that
// depend on session state. The same size gives the same text.
func dumpCorpus(size int) []byte {
	var b strings.Builder
	b.WriteString(`--
-- PostgreSQL database dump
--

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

`)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `--
-- Name: orders_%[1]d; Type: TABLE; Schema: public; Owner: app
--

CREATE TABLE public.orders_%[1]d (
    id bigint NOT NULL,
    customer_id bigint NOT NULL,
    status text DEFAULT 'new'::text NOT NULL,
    total numeric(12,2) DEFAULT 0 NOT NULL,
    note character varying(200),
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT orders_%[1]d_total_check CHECK ((total >= (0)::numeric))
);

ALTER TABLE public.orders_%[1]d OWNER TO app;

CREATE SEQUENCE public.orders_%[1]d_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.orders_%[1]d_id_seq OWNED BY public.orders_%[1]d.id;

ALTER TABLE ONLY public.orders_%[1]d ALTER COLUMN id SET DEFAULT nextval('public.orders_%[1]d_id_seq'::regclass);

CREATE FUNCTION public.orders_%[1]d_touch() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    NEW.created_at := now();
    IF NEW.total < 0 THEN
        RAISE EXCEPTION 'negative total for order %%', NEW.id;
    END IF;
    RETURN NEW;
END;
$$;

CREATE VIEW public.orders_%[1]d_open AS
 SELECT o.id, o.customer_id, o.total
   FROM public.orders_%[1]d o
  WHERE (o.status = ANY (ARRAY['new'::text, 'paid'::text]));

COPY public.orders_%[1]d (id, customer_id, status, total, note, created_at) FROM stdin;
`, i)
		for r := 0; r < 20; r++ {
			fmt.Fprintf(&b, "%d\t%d\tnew\t%d.50\tSET ROLE in a note; LISTEN here\t2026-01-%02d 10:00:00+00\n", r+1, (i*7+r)%1000, r*3, r%28+1)
		}
		fmt.Fprintf(&b, `\.

SELECT pg_catalog.setval('public.orders_%[1]d_id_seq', 20, true);

ALTER TABLE ONLY public.orders_%[1]d
    ADD CONSTRAINT orders_%[1]d_pkey PRIMARY KEY (id);

CREATE INDEX orders_%[1]d_customer_idx ON public.orders_%[1]d USING btree (customer_id, created_at DESC);

CREATE TRIGGER orders_%[1]d_touch BEFORE INSERT OR UPDATE ON public.orders_%[1]d FOR EACH ROW EXECUTE FUNCTION public.orders_%[1]d_touch();

GRANT SELECT ON TABLE public.orders_%[1]d TO reporting;

COMMENT ON TABLE public.orders_%[1]d IS 'Orders, partition %[1]d; LISTEN and SET in comments are not statements';

`, i)
		if i%50 == 0 {
			fmt.Fprintf(&b, "SELECT pg_advisory_lock(%d);\nLISTEN orders_%d;\nCREATE TEMP TABLE scratch_%d AS SELECT * FROM public.orders_%d;\n\n", i, i, i, i)
		}
	}
	return []byte(b.String())
}
