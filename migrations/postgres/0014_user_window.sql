-- The 24-hour customer-service window: when a user last wrote on WhatsApp (and to which
-- phone_number_id, kept in the message's raw metadata) is the newest WhatsApp inbound of that
-- user and bot. This index finds it without reading the user's other inbound (timers, SMS, deliveries).
CREATE INDEX inbox_user_whatsapp ON inbox (bot_id, user_number, id) WHERE source = 'whatsapp';
