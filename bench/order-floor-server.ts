// The least an order's front door can do, as a bare HTTP server: read the body, parse it, hash the
// order and check its ed25519 signature, answer. No JWT, no validation schema, no balance read, no
// actors, no database (bench/order-floor.ts measures it; everything left out only adds). A cancel's
// body is parsed and answered.
import { createServer } from 'node:http';
import { orderHash, verifyOrderSignature } from '../src/clob/signed-order.ts';

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const { order } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    // A cancel (bench/order-ratio.ts) carries no signed order: parsed and answered.
    const ok = !order || verifyOrderSignature(order, orderHash(order));
    res.writeHead(ok ? 200 : 400, { 'content-type': 'application/json' });
    res.end(ok ? '{"success":true}' : '{"success":false}');
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening'));
