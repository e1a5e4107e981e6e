import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

/**
 * One failed authentication: `_id` is `<address>|<windowStart>|<slot>` (see auth-failure.budget),
 * so counting relies only on `_id` uniqueness, which is atomic on MongoDB and on FerretDB alike.
 * No TTL index (FerretDB has none): AuthFailureLimiter deletes ended windows itself.
 */
@Schema({ collection: 'auth_failures', versionKey: false })
export class AuthFailureDocument {
  @Prop({ type: String, required: true })
  _id!: string;

  /** When the window of this failure ends; what the clean-up filters on. */
  @Prop({ type: Date, required: true })
  windowEnd!: Date;
}

export const AuthFailureSchema = SchemaFactory.createForClass(AuthFailureDocument);
