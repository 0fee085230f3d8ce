-- Where a payment's trace and its quote's began (issue 38, decision 212): the W3C traceparent of the request that
-- created each, written only while traces are on. Execution, confirmation and webhook delivery continue the payment's
-- trace from it across processes and restarts; a payment's reservation links to its quote's trace.
ALTER TABLE payment_intents ADD COLUMN traceparent text CHECK (traceparent IS NULL OR length(traceparent) = 55);
ALTER TABLE quotes ADD COLUMN traceparent text CHECK (traceparent IS NULL OR length(traceparent) = 55);
