/**
 * Pizza ordering: a menu list → sizes as reply buttons with the pizza's photo → the delivery
 * address in a WhatsApp Flow → a receipt with the PDF as a document header → order tracking
 * (an async lookup). A reminder nudges a quiet customer; an unfinished order expires.
 */
import { assign, fromPromise, setup } from 'xstate';
import { buttons, defineBot, flow, list, say, template, text, type ColloquyEvent } from 'colloquy';

export const MENU = {
  margherita: { title: 'Margherita', description: 'Tomato, mozzarella, basil', price: 9.5, image: 'https://images.example.com/pizza/margherita.jpg' },
  pepperoni: { title: 'Pepperoni', description: 'Tomato, mozzarella, pepperoni', price: 11, image: 'https://images.example.com/pizza/pepperoni.jpg' },
  veggie: { title: 'Garden', description: 'Peppers, olives, onion, mushrooms', price: 10.5, image: 'https://images.example.com/pizza/garden.jpg' },
  lemonade: { title: 'Lemonade', description: 'Fresh, 500 ml', price: 3, image: 'https://images.example.com/drinks/lemonade.jpg' },
} as const;
export type Item = keyof typeof MENU;
export const SIZES = { small: 1, medium: 1.3, large: 1.6 } as const;
export type Size = keyof typeof SIZES;

export interface PizzaContext {
  user: string;
  item?: Item;
  size?: Size;
  address?: string;
  orderId?: string;
  status?: string;
}

/** Looks an order up (a real bot calls its order system here; tests provide their own). */
export const trackOrder = fromPromise(async ({ input }: { input: { orderId: string } }) => {
  await new Promise((r) => setTimeout(r, 50));
  return `Order ${input.orderId} is in the oven and leaves in about 15 minutes.`;
});

const price = (c: PizzaContext) => (c.item && c.size ? Math.round(MENU[c.item].price * SIZES[c.size] * 100) / 100 : 0);

export const machine = setup({
  types: { context: {} as PizzaContext, input: {} as { user: string }, events: {} as ColloquyEvent },
  actors: { trackOrder },
  delays: { reminder: 5 * 60_000, expiry: 30 * 60_000 },
}).createMachine({
  id: 'pizza',
  context: ({ input }) => ({ user: input.user }),
  initial: 'ordering',
  states: {
    ordering: {
      initial: 'menu',
      after: { expiry: { target: 'abandoned' } },
      states: {
        menu: {
          entry: say(
            list({
              header: "Luigi's Pizza",
              body: 'Hi! What would you like today?',
              footer: 'Delivery in about 30 minutes',
              button: 'See the menu',
              sections: [
                {
                  title: 'Pizzas',
                  rows: (['margherita', 'pepperoni', 'veggie'] as const).map((id) => ({ id, title: MENU[id].title, description: `${MENU[id].description} - from $${MENU[id].price}` })),
                },
                { title: 'Drinks', rows: [{ id: 'lemonade', title: MENU.lemonade.title, description: MENU.lemonade.description }] },
              ],
            }),
          ),
          on: {
            'reply.margherita': { target: 'size', actions: assign({ item: 'margherita' as const }) },
            'reply.pepperoni': { target: 'size', actions: assign({ item: 'pepperoni' as const }) },
            'reply.veggie': { target: 'size', actions: assign({ item: 'veggie' as const }) },
            'reply.lemonade': { target: 'size', actions: assign({ item: 'lemonade' as const }) },
          },
        },
        size: {
          entry: say(({ context }) =>
            buttons({
              image: MENU[context.item!].image,
              body: `${MENU[context.item!].title}: which size?`,
              footer: 'Prices include tax',
              buttons: (Object.keys(SIZES) as Size[]).map((s) => ({ id: s, title: `${s[0]!.toUpperCase()}${s.slice(1)} $${(MENU[context.item!].price * SIZES[s]).toFixed(2)}` })),
            }),
          ),
          after: { reminder: { actions: say(text('Still there? Tap a size whenever you are ready.')) } },
          on: {
            'reply.small': { target: 'address', actions: assign({ size: 'small' as const }) },
            'reply.medium': { target: 'address', actions: assign({ size: 'medium' as const }) },
            'reply.large': { target: 'address', actions: assign({ size: 'large' as const }) },
          },
        },
        address: {
          entry: say(({ context }) =>
            flow({
              body: 'Where should we deliver?',
              flowId: '771203945',
              cta: 'Enter address',
              screen: 'DELIVERY_ADDRESS',
              data: { product_name: MENU[context.item!].title, product_description: `${context.size} - ${MENU[context.item!].description}`, product_price: price(context) },
              sms: 'Reply with your delivery address (street, number, city).',
            }),
          ),
          on: {
            flow: {
              target: '#pizza.placed',
              actions: assign({ address: ({ event }) => [event.data['street'], event.data['city']].filter(Boolean).join(', ') || String(event.data['address'] ?? '') }),
            },
            text: { target: '#pizza.placed', actions: assign({ address: ({ event }) => event.text.trim() }) },
          },
        },
      },
    },
    placed: {
      entry: [
        assign({ orderId: ({ context }) => `P${context.user.slice(-4)}${Math.floor(Date.now() / 1000) % 10_000}` }),
        say(({ context }) =>
          buttons({
            document: { link: `https://receipts.example.com/${context.orderId}.pdf`, fileName: `receipt-${context.orderId}.pdf` },
            body: `Thanks! ${context.size} ${MENU[context.item!].title} for $${price(context).toFixed(2)}, to ${context.address}. Your receipt is attached.`,
            buttons: [
              { id: 'track', title: 'Track my order' },
              { id: 'done', title: "That's all" },
            ],
          }),
        ),
      ],
      on: { 'reply.track': 'tracking', 'reply.done': 'done' },
    },
    tracking: {
      invoke: {
        src: 'trackOrder',
        input: ({ context }) => ({ orderId: context.orderId! }),
        onDone: { target: 'done', actions: [assign({ status: ({ event }) => event.output }), say(({ event }) => text(event.output))] },
        onError: { target: 'done', actions: say(text('We could not look your order up just now; it is on its way all the same.')) },
      },
    },
    done: { type: 'final', entry: say(text('Enjoy your meal! Write any time to order again.')) },
    abandoned: { type: 'final', entry: say(text('Your order was not finished, so we cancelled it. Write any time to start again.')) },
  },
});

/**
 * What goes instead of a free-form message once the user's 24-hour window closed (on the Cloud
 * API): a template the sandbox knows (approve your own in WhatsApp Manager). Its "Continue" comes
 * back as \`reply.continue\`, which no state handles: the current prompt is sent again, the window open.
 */
const reopen = template({
  name: 'colloquy_reopen',
  language: 'en_US',
  components: [
    { type: 'body', parameters: [{ type: 'text', text: "from Luigi's Pizza" }] },
    { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'continue' }] },
  ],
});

export default defineBot({
  id: 'pizza',
  machine,
  options: {
    sender: '15550000001',
    window: { closed: { template: reopen } },
    expireAfterMs: 2 * 60 * 60_000,
    flowForms: {
      '771203945': {
        title: 'Delivery address',
        fields: [
          { name: 'street', label: 'Street and number', required: true },
          { name: 'city', label: 'City', required: true },
          { name: 'notes', label: 'Notes for the rider' },
        ],
      },
    },
  },
});
