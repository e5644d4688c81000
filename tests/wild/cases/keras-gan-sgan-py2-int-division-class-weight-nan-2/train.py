            gen_imgs = self.generator.predict(noise)
            print(gen_imgs) # [[[[ 0.06864215] [ 0.00251574] [ 0.035886] ...,

            # Train the generator
            g_loss = self.combined.train_on_batch(noise, validity, class_weight=[cw1, cw2])

            gen_imgs = self.generator.predict(noise)
            print(gen_imgs) # [[[[ nan][ nan][ nan]...,
