/**
 * The seed's five request variants (seed §4.1 "Request variants shown", fields of §2.1–2.4), written
 * out as the JSON the messaging endpoint receives, and small helpers shared by the message tests.
 */
import { formatPath, MessageValidationError, type Issue } from '../../src/errors.js';
import { check } from '../../src/messages/validate.js';
import type { z } from 'zod';

/** List message: `type: "contacts"`, one section of 10 rows with numeric-text ids. */
export const SEED_LIST_JSON = `{
  "from": "5215512345678",
  "to": "5215587654321",
  "type": "contacts",
  "listMessages": {
    "headerText": "Our products",
    "body": "Choose the product you want to know more about.",
    "footer": "Colloquy Store",
    "buttonText": "See products",
    "sections": [
      {
        "title": "Products",
        "messages": [
          { "id": "1", "title": "Coffee", "description": "Ground coffee, 500 g" },
          { "id": "2", "title": "Tea", "description": "Green tea, 20 bags" },
          { "id": "3", "title": "Sugar", "description": "Cane sugar, 1 kg" },
          { "id": "4", "title": "Milk", "description": "Whole milk, 1 l" },
          { "id": "5", "title": "Bread", "description": "Sourdough loaf" },
          { "id": "6", "title": "Butter", "description": "Salted butter, 250 g" },
          { "id": "7", "title": "Cheese", "description": "Aged cheese, 300 g" },
          { "id": "8", "title": "Eggs", "description": "A dozen free-range eggs" },
          { "id": "9", "title": "Honey", "description": "Wildflower honey, 350 g" },
          { "id": "10", "title": "Jam", "description": "Strawberry jam, 370 g" }
        ]
      }
    ]
  }
}`;

const BUTTONS = `[
      { "id": "1", "title": "Buy" },
      { "id": "2", "title": "More info" },
      { "id": "3", "title": "Talk to an agent" }
    ]`;

/** Reply buttons with an image header. */
export const SEED_BUTTONS_IMAGE_JSON = `{
  "from": "5215512345678",
  "to": "5215587654321",
  "type": "interactive",
  "replyButtons": {
    "headerImage": { "link": "https://cdn.example.com/images/coffee.jpg" },
    "body": "Our ground coffee is back in stock. What would you like to do?",
    "footer": "Colloquy Store",
    "buttons": ${BUTTONS}
  }
}`;

/** Reply buttons with a video header. */
export const SEED_BUTTONS_VIDEO_JSON = `{
  "from": "5215512345678",
  "to": "5215587654321",
  "type": "interactive",
  "replyButtons": {
    "headerVideo": { "link": "https://cdn.example.com/videos/coffee.mp4" },
    "body": "Watch how our coffee is roasted. What would you like to do?",
    "footer": "Colloquy Store",
    "buttons": ${BUTTONS}
  }
}`;

/** Reply buttons with a document header and its file name. */
export const SEED_BUTTONS_DOCUMENT_JSON = `{
  "from": "5215512345678",
  "to": "5215587654321",
  "type": "interactive",
  "replyButtons": {
    "headerDocument": { "link": "https://cdn.example.com/docs/catalog.pdf", "fileName": "catalog.pdf" },
    "body": "Here is our catalog. What would you like to do?",
    "footer": "Colloquy Store",
    "buttons": ${BUTTONS}
  }
}`;

/** Flow message: action.name "flow", mode "draft", version "3", navigate with a payload. */
export const SEED_FLOW_JSON = `{
  "from": "5215512345678",
  "to": "5215587654321",
  "type": "interactive",
  "flow": {
    "body": "Order your coffee in a few taps.",
    "action": {
      "name": "flow",
      "parameters": {
        "mode": "draft",
        "flow_message_version": "3",
        "flow_id": "1234567890123456",
        "flow_token": "FLOW_TOKEN_5215587654321",
        "flow_cta": "Order now",
        "flow_action": "navigate",
        "flow_action_payload": {
          "screen": "PRODUCT_SCREEN",
          "data": {
            "product_name": "Coffee",
            "product_description": "Ground coffee, 500 g",
            "product_price": 129.5
          }
        }
      }
    }
  }
}`;

export const SEED_VARIANTS = {
  list: SEED_LIST_JSON,
  'buttons with headerImage': SEED_BUTTONS_IMAGE_JSON,
  'buttons with headerVideo': SEED_BUTTONS_VIDEO_JSON,
  'buttons with headerDocument': SEED_BUTTONS_DOCUMENT_JSON,
  flow: SEED_FLOW_JSON,
} as const;

/** A fresh, mutable copy of a seed variant. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function seed(json: string): any {
  return JSON.parse(json);
}

/** A string of `n` characters (code points) made of `unit`. */
export function chars(n: number, unit = 'a'): string {
  return unit.repeat(n);
}

/** The issues of validating `value` as `schema`, as `path: message` pairs with printed paths. */
export function issuesOf(schema: z.ZodType, value: unknown): { path: string; message: string }[] {
  const r = check(schema, value);
  return r.ok ? [] : r.issues.map((i) => ({ path: formatPath(i.path), message: i.message }));
}

/** The printed paths of some issues. */
export function pathsOf(issues: readonly Issue[]): string[] {
  return issues.map((i) => formatPath(i.path));
}

/** Runs `fn`, expects a MessageValidationError, and returns it. */
export function validationError(fn: () => unknown): MessageValidationError {
  try {
    fn();
  } catch (e) {
    if (e instanceof MessageValidationError) return e;
    throw new Error(`expected a MessageValidationError, got ${String(e)}`);
  }
  throw new Error('expected a MessageValidationError, nothing was thrown');
}
