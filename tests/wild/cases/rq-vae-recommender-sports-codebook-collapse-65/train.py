-----------------------------
import data.processed
import modules.quantize

train.iterations=1
train.learning_rate=0.001
train.weight_decay=0.0001
train.batch_size=256
train.vae_input_dim=768
train.vae_n_cat_feats=0
train.vae_hidden_dims=[512, 256, 128]
train.vae_embed_dim=32
train.vae_codebook_size=256
train.vae_codebook_normalize=True
train.vae_sim_vq=False
train.save_model_every=5000
train.eval_every=5000
train.dataset_folder="dataset/amazon"
train.dataset=%data.processed.RecDataset.AMAZON
train.save_dir_root="out/rqvae/amazon/sports/"
train.wandb_logging=False
train.commitment_weight=0.1
train.vae_n_layers=3
train.vae_codebook_mode=%modules.quantize.QuantizeForwardMode.STE 
train.force_dataset_process=True
train.dataset_split="sports"
train.do_eval=True
train.use_kmeans_init=True
-----------------------------
